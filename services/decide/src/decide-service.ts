import type { TokenResolver } from '@tributary/control-plane';
import { evaluateFlag, groupsToFetch, needsStoredPerson } from '@tributary/flags';
import { unauthorized } from '@tributary/http';
import type { Logger } from '@tributary/logger';
import { assignOwn, checkToken, setOwn } from '@tributary/payload';
import type { DecideBody } from './decide-body.js';
import type { DecideMetrics } from './decide-metrics.js';
import type { EvaluationData, StoredPerson } from './evaluation-data.js';
import type { FlagDefinitions, ProjectFlags } from './flag-definitions.js';
import type { Evaluated } from './flag-responses.js';
import { mayRemember, type AnswerKeyParts, type RememberedAnswers } from './remembered-answers.js';
import { withRequestGroupProperties } from './request-group-properties.js';

export interface DecideServiceDeps {
  tokens: Pick<TokenResolver, 'known' | 'resolve'>;
  definitions: Pick<FlagDefinitions, 'loaded' | 'forProject'>;
  data: Pick<EvaluationData, 'knownPerson' | 'person' | 'groupProperties' | 'listedCohortIds' | 'hashKeyOverrides'>;
  logger: Logger;
  clock?: () => Date;
  /** `$geoip_*` person properties of the client's address (spec rules 2 and 3). */
  geoip?: (ip: string | undefined) => Record<string, unknown>;
  metrics?: DecideMetrics;
  /** Answers given again to the same request while what they came from is unchanged; none remembered without. */
  answers?: RememberedAnswers;
}

/** A flags request as the routes hand it over: what its answer is remembered by, and its body, decoded only when no answer is. */
export interface FlagQuestion extends AnswerKeyParts {
  decode: () => DecideBody;
}

/** Every flag's result, and whether a store failed meanwhile (PostHog's `errorsWhileComputingFlags`). */
export interface FlagAnswer {
  evaluated: Evaluated;
  errors: boolean;
  /** The project's token, checked, and its id: what its remote config is found by. */
  token: string;
  teamId: number;
}

type GroupProperties = Record<string, Record<string, unknown>>;

// What each read of stored data gives; `failed` when its store did not answer.
interface PersonRead {
  person: StoredPerson | null;
  /** Only an answer from this process's copy of the person can be checked later (see RememberedAnswers). */
  fromCopy: boolean;
  failed: boolean;
}
interface GroupsRead {
  properties: GroupProperties;
  fromStore: boolean;
  failed: boolean;
}
interface MembershipRead {
  listedCohortIds: ReadonlySet<number>;
  /** None unless a flag asks for continuity: every flag would look its key up in them. */
  hashKeyOverrides: Record<string, string> | undefined;
  failed: boolean;
}

const NO_PERSON: PersonRead = { person: null, fromCopy: false, failed: true };
const NO_MEMBERSHIP: MembershipRead = { listedCohortIds: new Set(), hashKeyOverrides: undefined, failed: false };

/**
 * Flag evaluation for `/decide` and `/flags`: the project by its token, the stored data its flags
 * read (each read falling back to an answer without it when its store is away, so a store costs
 * some flags, never the response), the flags evaluated, and the answer remembered when it may be.
 */
export class DecideService {
  private readonly clock: () => Date;

  constructor(private readonly deps: DecideServiceDeps) {
    this.clock = deps.clock ?? (() => new Date());
  }

  async answer(question: FlagQuestion): Promise<FlagAnswer> {
    const answer = await this.evaluate(question);
    let enabled = 0;
    for (const result of answer.evaluated.results) if (result.enabled) enabled++;
    this.deps.metrics?.evaluated(enabled, answer.evaluated.results.length - enabled);
    return answer;
  }

  private async evaluate(question: FlagQuestion): Promise<FlagAnswer> {
    const key = this.deps.answers?.keyOf(question) ?? null;
    const again = key === null ? undefined : this.remembered(key);
    if (again) return again;
    const body = question.decode();
    const checked = checkToken(body.api_key ?? body.token);
    if (!checked.ok) throw unauthorized(checked.detail, 'invalid_api_key');
    // What is held in process is taken without an await: each costs a turn of the microtask queue.
    const project = this.deps.tokens.known(checked.token) ?? (await this.deps.tokens.resolve(checked.token));
    if (!project) throw unauthorized('Project API key is invalid: no project has this key.', 'invalid_api_key');
    const teamId = project.id;
    const distinctId = String(body.distinct_id);
    const groups: Record<string, string> = {};
    if (body.groups) for (const type of Object.keys(body.groups)) setOwn(groups, type, String(body.groups[type]));
    const defs = this.deps.definitions.loaded(teamId) ?? (await this.deps.definitions.forProject(teamId));

    const person = this.knownPerson(teamId, distinctId) ?? (await this.storedPerson(teamId, distinctId));
    const groupsRead = await this.groupProperties(teamId, defs, groups, body.group_properties);
    const membership = person.person && (defs.needs.listedCohorts || defs.continuityKeys.length > 0) ? await this.membership(teamId, person.person, defs, body.$anon_distinct_id) : NO_MEMBERSHIP;
    const failed = person.failed || groupsRead.failed || membership.failed;

    const location = body.geoip_disable === true ? undefined : this.deps.geoip?.(question.ip);
    const context = {
      distinctId,
      // Stored, then location, then the request's own: later ones win.
      personProperties: assignOwn(assignOwn(assignOwn({}, person.person?.properties), location), body.person_properties),
      groups,
      groupProperties: withRequestGroupProperties(groupsRead.properties, body.group_properties),
      groupTypeMapping: defs.groupTypeMapping,
      cohorts: defs.cohorts,
      listedCohortIds: membership.listedCohortIds,
      hashKeyOverrides: membership.hashKeyOverrides,
      now: this.clock(),
    };
    // Without the stored person, a flag that needs its properties cannot be answered truthfully: leave it out.
    const requestPersonProperties = failed ? assignOwn(assignOwn({}, location), body.person_properties) : null;
    const evaluated: Evaluated = { flags: [], results: [] };
    for (const flag of defs.flags) {
      if (requestPersonProperties && needsStoredPerson(flag, requestPersonProperties)) continue;
      evaluated.flags.push(flag);
      evaluated.results.push(evaluateFlag(flag, context));
    }
    // Remembered answers are given for the definitions' flags: without a failure, every flag was evaluated.
    if (key !== null && person.person && mayRemember({ personFromCopy: person.fromCopy, storeFailed: failed, readStoredGroups: groupsRead.fromStore, definitions: defs })) {
      this.deps.answers?.remember(key, { token: checked.token, teamId, distinctId, definitions: defs, personProperties: person.person.properties, results: evaluated.results.slice() });
    }
    return { evaluated, errors: failed, token: checked.token, teamId };
  }

  /** The remembered answer to this request while its token, definitions and person copy are still the ones held. */
  private remembered(key: string): FlagAnswer | undefined {
    const answer = this.deps.answers?.get(key);
    const found =
      answer !== undefined &&
      this.deps.tokens.known(answer.token)?.id === answer.teamId &&
      this.deps.definitions.loaded(answer.teamId) === answer.definitions &&
      this.deps.data.knownPerson(answer.teamId, answer.distinctId)?.properties === answer.personProperties;
    this.deps.metrics?.cacheLookup('answers', found);
    return found ? { evaluated: { flags: answer.definitions.flags, results: answer.results }, errors: false, token: answer.token, teamId: answer.teamId } : undefined;
  }

  /** The person when this process holds a copy; undefined when it must be read from the stores. */
  private knownPerson(teamId: number, distinctId: string): PersonRead | undefined {
    try {
      const copy = this.deps.data.knownPerson(teamId, distinctId);
      return copy && { person: copy, fromCopy: true, failed: false };
    } catch (error) {
      return this.unavailable('person properties', error, NO_PERSON);
    }
  }

  private async storedPerson(teamId: number, distinctId: string): Promise<PersonRead> {
    try {
      return { person: await this.deps.data.person(teamId, distinctId), fromCopy: false, failed: false };
    } catch (error) {
      return this.unavailable('person properties', error, NO_PERSON);
    }
  }

  /** Stored properties of the request's groups, read only when the flags compare a key the request left out. */
  private async groupProperties(teamId: number, defs: ProjectFlags, groups: Record<string, string>, sent: GroupProperties | undefined): Promise<GroupsRead> {
    try {
      const wanted = groupsToFetch(defs.needs, groups, sent ?? {});
      if (Object.keys(wanted).length === 0) return { properties: {}, fromStore: false, failed: false };
      return { properties: await this.deps.data.groupProperties(teamId, wanted, defs.groupTypeIndexes), fromStore: true, failed: false };
    } catch (error) {
      return this.unavailable('group properties', error, { properties: {}, fromStore: true, failed: true });
    }
  }

  /** The person's static cohorts and continuity overrides, each read only when some flag needs it. */
  private async membership(teamId: number, person: StoredPerson, defs: ProjectFlags, anonDistinctId: DecideBody['$anon_distinct_id']): Promise<MembershipRead> {
    let listedCohortIds = NO_MEMBERSHIP.listedCohortIds;
    try {
      if (defs.needs.listedCohorts) listedCohortIds = await this.deps.data.listedCohortIds(person.personId);
      let hashKeyOverrides: Record<string, string> | undefined;
      if (defs.continuityKeys.length > 0) {
        const anon = anonDistinctId === undefined || anonDistinctId === null ? null : String(anonDistinctId);
        hashKeyOverrides = await this.deps.data.hashKeyOverrides(teamId, person.personId, anon, defs.continuityKeys);
      }
      return { listedCohortIds, hashKeyOverrides, failed: false };
    } catch (error) {
      return this.unavailable('cohorts or continuity overrides', error, { listedCohortIds, hashKeyOverrides: undefined, failed: true });
    }
  }

  private unavailable<T>(what: string, error: unknown, fallback: T): T {
    this.deps.logger.warn({ err: error }, `${what} unavailable`);
    return fallback;
  }
}

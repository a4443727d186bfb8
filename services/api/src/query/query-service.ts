import { randomUUID } from 'node:crypto';
import { ClickHouseError, Sql, isRequestTimeout, materializedColumnsOf, queryInputProblem, serverOf, type ClickHouse, type CompactResult, type MaterializedColumns } from '@tributary/clickhouse';
import { DEFAULT_PERSONS_ON_EVENTS_MODE, HogQLError, MAX_LIMIT, PERSONS_ON_EVENTS_MODES, cohortPersonIdsQuery, inCohortRefs, matchesActionRefs, newestFirstWindow, parseSelect, printHogQL, printQuery, withSample, type FilterContext, type PrintOptions, type PersonsOnEventsMode, type PrintedQuery, type PropertyRead, type SelectLike, type SelectQuery } from '@tributary/hogql';
import type { ProjectModifiers } from '@tributary/control-plane';
import { HttpError, badRequest } from '@tributary/http';
import { PropertyFilterError } from '@tributary/property-filters';
import type { ActionStore } from '../actions/action-store.js';
import { actionIdsIn, matchesActionConditions, projectActions } from '../actions/query-actions.js';
import type { CohortStore } from '../cohorts/cohort-store.js';
import { cohortIdsIn, filterContext } from '../cohorts/filter-cohorts.js';
import { isExperimentKind, runExperimentQuery, type ExperimentQueryRequest } from '../experiments/experiment-query.js';
import type { ExperimentStore } from '../experiments/experiment-store.js';
import { buildEventsQuery, eventsAfter, isoDateTime, shapeValue, type ColumnShape, type EventsQueryRequest } from './events-query.js';
import { readNewestFirst } from './look-back.js';
import { queryClickHouseSettings, type QueryLimits } from './query-settings.js';
import { runFunnelsQuery, type FunnelsQueryRequest } from './insights/funnels/funnels-query-runner.js';
import type { InsightCache, RefreshMode } from './insight-cache.js';
import { InsightCalendar } from './insights/toolkit/insight-calendar.js';
import { at } from './insights/toolkit/hogql-builders.js';
import { seconds, type InsightRunDeps } from './insights/toolkit/insight-series.js';
import { samplingFactorOf, samplingRate } from './insights/toolkit/sampling.js';
import { runPathsQuery, type PathsQueryRequest } from './insights/paths/paths-query.js';
import { runActorsQuery, type ActorsQueryRequest } from './insights/actors/actors-query.js';
import type { FunnelsActorsQuery, InsightActorsQuery } from './insights/actors/insight-actors.js';
import { runLifecycleQuery, type LifecycleQueryRequest } from './insights/lifecycle/lifecycle-query.js';
import { runRetentionQuery, type RetentionQueryRequest } from './insights/retention/retention-query.js';
import { runStickinessQuery, type StickinessQueryRequest } from './insights/stickiness/stickiness-query.js';
import { runTrendsQuery, type TrendsQueryRequest } from './insights/trends/trends-query-runner.js';
import { runWebOverviewQuery, type WebOverviewQueryRequest } from './insights/web-analytics/web-overview-query.js';
import { runWebStatsTableQuery, type WebStatsTableQueryRequest } from './insights/web-analytics/web-stats-table-query.js';

export interface HogQLQueryRequest {
  kind: 'HogQLQuery';
  query: string;
  values?: Record<string, unknown>;
}

type InsightRequest =
  | TrendsQueryRequest
  | FunnelsQueryRequest
  | StickinessQueryRequest
  | LifecycleQueryRequest
  | RetentionQueryRequest
  | PathsQueryRequest
  | ActorsQueryRequest
  | InsightActorsQuery
  | FunnelsActorsQuery
  | WebOverviewQueryRequest
  | WebStatsTableQueryRequest;
export type QueryRequest = HogQLQueryRequest | EventsQueryRequest | InsightRequest | ExperimentQueryRequest;

/** The project a query runs for: its rows only, its timezone for dates, its default modifiers. */
export interface QueryProject {
  id: number;
  timezone: string;
  modifiers?: ProjectModifiers;
}

/** The query's own `modifiers.personsOnEventsMode` (validated at the edge), else the project's, else the default. */
function personsOnEventsOf(project: QueryProject, request: QueryRequest): PersonsOnEventsMode {
  const own = (request as { modifiers?: ProjectModifiers }).modifiers?.personsOnEventsMode ?? project.modifiers?.personsOnEventsMode;
  return (PERSONS_ON_EVENTS_MODES as readonly string[]).includes(own ?? '') ? (own as PersonsOnEventsMode) : DEFAULT_PERSONS_ON_EVENTS_MODE;
}

/**
 * The insight kinds: each builds its HogQL trees and shapes its answer itself; the trees it hands
 * to `run` are printed here, once, for the project, and run under the same settings, kill and
 * concurrency limit as a HogQLQuery.
 */
const INSIGHTS: { [K in InsightRequest['kind']]: (request: Extract<InsightRequest, { kind: K }>, deps: InsightRunDeps) => Promise<object> } = {
  TrendsQuery: runTrendsQuery,
  FunnelsQuery: runFunnelsQuery,
  StickinessQuery: runStickinessQuery,
  LifecycleQuery: runLifecycleQuery,
  RetentionQuery: runRetentionQuery,
  PathsQuery: runPathsQuery,
  // The persons behind an insight's point are cached with it: the same data gives the same numbers.
  ActorsQuery: runActorsQuery,
  // Asked alone, as PostHog takes them: the first page of the point's persons, in the default columns.
  InsightActorsQuery: (source, deps) => runActorsQuery({ kind: 'ActorsQuery', source }, deps),
  FunnelsActorsQuery: (source, deps) => runActorsQuery({ kind: 'ActorsQuery', source }, deps),
  WebOverviewQuery: runWebOverviewQuery,
  WebStatsTableQuery: runWebStatsTableQuery,
};
const isInsight = (request: QueryRequest): request is InsightRequest => Object.hasOwn(INSIGHTS, request.kind);
const isExperiment = (request: QueryRequest): request is ExperimentQueryRequest => isExperimentKind(request.kind);

export interface QueryTiming {
  k: string;
  t: number;
}

export interface QueryResponse {
  results: unknown[][];
  columns: string[];
  types: [string, string][] | string[];
  hogql: string;
  clickhouse: string;
  hasMore: boolean;
  limit: number;
  offset: number;
  timings: QueryTiming[];
  query?: string;
}

export interface QueryServiceDeps {
  clickhouse: ClickHouse;
  limits: QueryLimits & { queryConcurrencyPerProject: number };
  /** Insight answers (not HogQL or events lists, whose answers follow now()). */
  cache: InsightCache;
  /** The cohorts property filters name, and their versions for the cache. */
  cohorts: Pick<CohortStore, 'definitions' | 'memberDistinctIds' | 'versions' | 'idsByName'>;
  /** The actions an `ActionsNode` or `matchesAction` names. */
  actions: Pick<ActionStore, 'definitions'>;
  /** The experiment an ExperimentTrendsQuery or ExperimentFunnelsQuery reads, looked up in the project. */
  experiments: Pick<ExperimentStore, 'get'>;
  /** Counts the properties each printed query reads, which pick the properties worth a column (`PropertyReadCounter`). */
  propertyReads?: { record(reads: readonly PropertyRead[]): void };
  /** The properties events has columns for; by default `materializedColumnsOf` the client, refreshed once a minute. */
  materializedColumns?: () => Promise<MaterializedColumns>;
  clock?: () => Date;
}

export interface RunOptions {
  /** PostHog's `client_query_id`: names the statement in ClickHouse, under the project's prefix. */
  clientQueryId?: string;
  refresh?: RefreshMode;
}


const isDateTime = (type: string) => /^(Nullable\()?DateTime(\('UTC'\))?\)?$/.test(type);

/** ClickHouse's code for a statement stopped at its time limit (max_execution_time). */
const TIMEOUT_EXCEEDED = 159;

/** Errors of a query the client wrote, as the one error shape: a 400 that names the problem. */
function clientError(error: unknown, limits: QueryLimits): HttpError | null {
  if (error instanceof HogQLError) return badRequest(error.message, 'query', error.code);
  if (error instanceof PropertyFilterError) return badRequest(`properties: ${error.message}`, 'properties', 'invalid_property_filter');
  if (!(error instanceof ClickHouseError)) return null;
  if (error.code === TIMEOUT_EXCEEDED) {
    return badRequest(`The query ran longer than ${limits.queryMaxExecutionTimeS} s and was stopped; narrow its date range or what it reads.`, 'query', 'query_timeout');
  }
  if (error.code === 394) return badRequest('The query was cancelled (DELETE .../query/:client_query_id/) before it finished.', 'query', 'query_cancelled');
  if (error.code === 241) {
    return badRequest(`The query needs more than the ${limits.queryMaxMemoryBytes} bytes of memory a query may use; aggregate more or read fewer rows.`, 'query', 'query_memory_limit');
  }
  const problem = queryInputProblem(error);
  return problem ? badRequest(`The query cannot run: ${problem}.`, 'query', 'hogql_query_error') : null;
}

/**
 * Runs the query endpoint's queries: parses, prints for the project (the printer adds the tenant
 * guard), runs with the query limits, and shapes the answer as PostHog's. A query whose client went
 * away is killed in ClickHouse rather than left to run out its time.
 */
export class QueryService {
  private readonly running = new Map<number, number>();
  private readonly clock: () => Date;

  constructor(private readonly deps: QueryServiceDeps) {
    this.clock = deps.clock ?? (() => new Date());
  }

  /** The answer; an insight's from the cache by `refresh` (`blocking` by default), with `results: null` when `force_cache` finds none. */
  async run(project: QueryProject, request: QueryRequest, signal: AbortSignal, options: RunOptions = {}): Promise<QueryResponse | object> {
    if (!isInsight(request)) {
      // Lists and SQL follow now() and every table, so they are never cached: force_cache finds nothing.
      if (options.refresh === 'force_cache') return { results: null, is_cached: false, last_refresh: null };
      return { ...(await this.gated(project, request, signal, options.clientQueryId)), is_cached: false, last_refresh: this.clock().toISOString() };
    }
    // A cohort or action the query names stands for its filters, members or steps as they are now,
    // so an edited or deleted one makes it another question, with its own entry. The versions are
    // read before the computation reads them, so an answer is never older than its key.
    // Cohorts within cohorts and the actions of behavioural conditions count too.
    const named = await this.filterContext(project.id, request, []);
    const cohorts = await this.deps.cohorts.versions(project.id, [...named.cohorts.keys()]);
    const actions = [...named.actions!.values()];
    // The project's own modifiers make another question of the same query.
    const keyed = { query: request, cohorts, ...(actions.length > 0 && { actions }), personsOnEvents: personsOnEventsOf(project, request) };
    const answer = await this.deps.cache.answer(project, keyed, options.refresh ?? 'blocking', () => this.gated(project, request, signal, options.clientQueryId));
    if ('answer' in answer) return { results: null, is_cached: false, last_refresh: null, cache_key: answer.cache_key };
    return answer;
  }

  /** Runs the query within the project's concurrency limit. */
  private gated(project: QueryProject, request: QueryRequest, signal: AbortSignal, clientQueryId: string | undefined): Promise<QueryResponse | object> {
    return this.limited(project.id, clientQueryId, (queryId) => this.execute(project, request, signal, queryId));
  }

  private async limited<T>(teamId: number, clientQueryId: string | undefined, work: (queryId: string) => Promise<T>): Promise<T> {
    const inFlight = this.running.get(teamId) ?? 0;
    if (inFlight >= this.deps.limits.queryConcurrencyPerProject) {
      throw new HttpError(429, 'throttled', 'concurrency_limit', `This project already runs ${inFlight} queries, the most it may run at once; try again when one finished.`, null, { 'Retry-After': '1' });
    }
    this.running.set(teamId, inFlight + 1);
    try {
      // As PostHog names them: the project, the client's id, and a part of its own, since a client may reuse its id.
      return await work(`${teamId}_${clientQueryId ?? randomUUID()}_${randomUUID().slice(0, 8)}`);
    } catch (error) {
      throw clientError(error, this.deps.limits) ?? error;
    } finally {
      const left = (this.running.get(teamId) ?? 1) - 1;
      if (left > 0) this.running.set(teamId, left);
      else this.running.delete(teamId);
    }
  }

  /** Stops the project's running queries the client named `clientQueryId` (PostHog's `DELETE .../query/:id/`). */
  async cancel(teamId: number, clientQueryId: string): Promise<void> {
    await this.deps.clickhouse.kill(`${teamId}_${clientQueryId}_`);
  }

  private async execute(project: QueryProject, request: QueryRequest, signal: AbortSignal, queryId: string): Promise<QueryResponse | object> {
    const teamId = project.id;
    // Printed for the release this client talks to, asked once: what it lacks is refused with a 400 that names the release it needs.
    const server = await serverOf(this.deps.clickhouse);
    // The properties events has columns for, from a list refreshed now and then, not asked per query.
    const materialized = await (this.deps.materializedColumns?.() ?? materializedColumnsOf(this.deps.clickhouse));
    const personsOnEvents = personsOnEventsOf(project, request);
    // A statement's property reads count once per request: a page's look-back windows read the same properties again.
    const print = (ast: SelectLike, options: Omit<PrintOptions, 'teamId' | 'server' | 'materialized'> = {}, countReads = true): PrintedQuery => {
      const printed = printQuery(ast, { teamId, server, materialized, personsOnEvents, ...options });
      if (countReads) this.deps.propertyReads?.record(printed.propertyReads);
      return printed;
    };
    const filterContextOf = (request: EventsQueryRequest | InsightRequest) => this.filterContext(teamId, request, []);
    if (isExperiment(request)) {
      // Another project's experiment is not found, as one that does not exist.
      const experiment = await this.deps.experiments.get(teamId, request.experiment_id);
      if (!experiment) throw badRequest(`Experiment ${request.experiment_id} does not exist in this project.`, 'experiment_id', 'experiment_not_found');
      return runExperimentQuery(request, experiment, (ast, values) => this.runInClickHouse(print(ast, { values }).clickhouse, signal, queryId), await this.filterContext(teamId, request, []));
    }
    if (isInsight(request)) {
      const filters = await filterContextOf(request);
      // The runner builds trees; each is printed here for the project like any other query, and they run one after another under the one query id.
      const run = INSIGHTS[request.kind] as (request: InsightRequest, deps: InsightRunDeps) => Promise<object>;
      // The persons behind a point are listed whole: a list of the sample's persons would name too few.
      const factor = 'samplingFactor' in request ? samplingFactorOf(request) : null;
      const asRun = (ast: SelectLike) => (factor === null ? ast : withSample(ast, factor));
      const runTree = (ast: SelectLike) => this.runInClickHouse(print(asRun(ast)).clickhouse, signal, queryId);
      const answer = await run(request, { now: filters.now, filters, calendar: new InsightCalendar(project.timezone), run: runTree, hogql: (ast) => printHogQL(asRun(ast)) });
      return factor === null ? answer : { ...answer, samplingRate: samplingRate(factor) };
    }
    const started = performance.now();
    const timings: QueryTiming[] = [];
    let ast: SelectLike;
    let shapes: ColumnShape[] | null = null;
    let columns: string[] | null = null;
    let printed: PrintedQuery;
    let result: CompactResult;
    if (request.kind === 'HogQLQuery') {
      ast = await parseSelect(request.query);
      timings.push({ k: './parse', t: seconds(started) });
      const printStarted = performance.now();
      const context = { values: request.values ?? {}, actions: await this.matchesActions(teamId, ast), cohorts: await this.inCohorts(teamId, ast) };
      printed = print(ast, context);
      timings.push({ k: './print', t: seconds(printStarted) });
      const executeStarted = performance.now();
      // The windows together run within the one query's time limit, as the whole range alone would.
      const deadline = executeStarted + this.deps.limits.queryMaxExecutionTimeS * 1000;
      const window = newestFirstWindow(ast);
      if (window) {
        // A page newest first reads recent windows first, as the events list does; the answer names the statement that gave it.
        const whole = printed;
        const fetched = whole.paginatedLimit === null ? whole.limit : whole.limit + 1;
        const run = async (statement: PrintedQuery) => ({ printed: statement, result: await this.runInClickHouse(statement.clickhouse, signal, queryId, deadline) });
        const now = this.clock();
        ({ printed, result } = await readNewestFirst<Awaited<ReturnType<typeof run>>>(now, undefined, (r) => r.result.data.length >= fetched, (from) => run(from ? print(window(at(from)), context, false) : whole)));
      } else {
        result = await this.runInClickHouse(printed.clickhouse, signal, queryId);
      }
      timings.push({ k: './clickhouse_execute', t: seconds(executeStarted) });
    } else {
      const built = await buildEventsQuery(request, await filterContextOf(request));
      ({ shapes, columns } = built);
      timings.push({ k: './build', t: seconds(started) });
      const limit = request.limit !== undefined && request.limit > 0 ? Math.min(request.limit, MAX_LIMIT) : undefined;
      const actions = await this.matchesActions(teamId, built.ast);
      const cohorts = await this.inCohorts(teamId, built.ast);
      const executeStarted = performance.now();
      const deadline = executeStarted + this.deps.limits.queryMaxExecutionTimeS * 1000;
      // A list newest first reads recent windows first, within the one time limit; the answer names the statement that gave it.
      let counted = false;
      const run = async (tree: SelectQuery) => {
        const statement = print(tree, { actions, cohorts, ...(limit !== undefined && { defaultLimit: limit }) }, !counted);
        counted = true;
        return { tree, printed: statement, result: await this.runInClickHouse(statement.clickhouse, signal, queryId, deadline) };
      };
      const range = built.newestFirst;
      const ran = range
        ? await readNewestFirst(range.before, range.after, (r) => r.printed.paginatedLimit !== null && r.result.data.length > r.printed.paginatedLimit, (from: Date | undefined) => run(from ? eventsAfter(built.ast, from) : built.ast))
        : await run(built.ast);
      ({ tree: ast, printed, result } = ran);
      timings.push({ k: './clickhouse_execute', t: seconds(executeStarted) });
    }

    const dateColumns = result.meta.map((m) => isDateTime(m.type));
    let rows = result.data.map((row) => row.map((value, i) => (dateColumns[i] ? isoDateTime(value) : value)));
    if (shapes) rows = rows.map((row) => row.map((value, i) => shapeValue(shapes![i] ?? 'value', value)));
    const hasMore = printed.paginatedLimit !== null && rows.length > printed.paginatedLimit;
    if (hasMore) rows = rows.slice(0, printed.paginatedLimit!);
    timings.push({ k: '.', t: seconds(started) });

    const ran = ast.node === 'SelectQuery' && !ast.limit ? { ...ast, limit: { node: 'Constant' as const, value: printed.limit } } : ast;
    const response: QueryResponse = {
      results: rows,
      columns: columns ?? printed.columns,
      types: request.kind === 'HogQLQuery' ? result.meta.map((m, i): [string, string] => [printed.columns[i] ?? m.name, m.type]) : result.meta.map((m) => m.type),
      hogql: printHogQL(ran),
      clickhouse: printed.clickhouse,
      hasMore,
      limit: printed.limit,
      offset: printed.offset,
      timings,
    };
    if (request.kind === 'HogQLQuery') response.query = request.query;
    return response;
  }

  /**
   * `now`, and the project's cohorts and actions the request names (an action's steps may name
   * cohorts too); `names` are actions named by matchesAction.
   */
  private async filterContext(teamId: number, request: unknown, names: readonly string[], ids: readonly number[] = []): Promise<FilterContext> {
    const actions = await projectActions(this.deps.actions, teamId, [...actionIdsIn(request), ...ids], names);
    return filterContext(this.deps, teamId, cohortIdsIn(request), this.clock(), actions);
  }

  /** The conditions of the project's actions a query's `matchesAction(...)` calls name, for the printer; none asked, none read. */
  private async matchesActions(teamId: number, ast: SelectLike) {
    const refs = matchesActionRefs(ast);
    if (refs.length === 0) return undefined;
    const names = refs.filter((r): r is string => typeof r === 'string');
    const ids = refs.filter((r): r is number => typeof r === 'number');
    const context = await this.filterContext(teamId, null, names, ids);
    return matchesActionConditions([...context.actions!.values()], context);
  }

  /**
   * The persons' ids of the project's cohorts a query's `IN COHORT`s name, by name or id, for the
   * printer; another project's cohort is not found, and a name several cohorts share is refused.
   */
  private async inCohorts(teamId: number, ast: SelectLike): Promise<Map<string | number, SelectQuery> | undefined> {
    const refs = inCohortRefs(ast);
    if (refs.length === 0) return undefined;
    const named = await this.deps.cohorts.idsByName(teamId, refs.filter((r): r is string => typeof r === 'string'));
    const idOf = new Map<string | number, number>();
    for (const ref of refs) {
      if (typeof ref === 'number') {
        if (Number.isSafeInteger(ref)) idOf.set(ref, ref);
        continue;
      }
      const ids = named.filter((c) => c.name === ref).map((c) => c.id);
      if (ids.length > 1) throw new HogQLError(`Several cohorts are named ${JSON.stringify(ref)}: write IN COHORT with the id of one (${ids.join(', ')})`, 'hogql_query_error');
      if (ids.length === 1) idOf.set(ref, ids[0]!);
    }
    const context = await filterContext(this.deps, teamId, [...idOf.values()], this.clock());
    const cohorts = new Map<string | number, SelectQuery>();
    for (const [ref, id] of idOf) if (context.cohorts.has(id)) cohorts.set(ref, cohortPersonIdsQuery(id, context));
    return cohorts;
  }

  /**
   * A page of a cohort's persons' ids (uuids, newest persons first) and how many there are, read
   * from ClickHouse as the cohort's conditions take them now; the cohort must be the project's.
   */
  async cohortPersons(project: QueryProject, cohortId: number, page: { limit: number; offset: number }, signal: AbortSignal): Promise<{ count: number; ids: string[] }> {
    const teamId = project.id;
    const context = await filterContext(this.deps, teamId, [cohortId], this.clock());
    const persons = cohortPersonIdsQuery(cohortId, context);
    const server = await serverOf(this.deps.clickhouse);
    const queryId = `${teamId}_cohort_${cohortId}_${randomUUID().slice(0, 8)}`;
    const ordered: SelectQuery = { ...persons, order_by: [{ node: 'OrderExpr', expr: { node: 'Field', chain: ['created_at'] }, order: 'DESC' }, { node: 'OrderExpr', expr: { node: 'Field', chain: ['id'] }, order: 'ASC' }], limit: { node: 'Constant', value: page.limit }, offset: { node: 'Constant', value: page.offset } };
    const counted: SelectQuery = { node: 'SelectQuery', select: [{ node: 'Call', name: 'count', args: [] }], select_from: { node: 'JoinExpr', table: persons } };
    try {
      const [rows, total] = await Promise.all([
        this.runInClickHouse(printQuery(ordered, { teamId, server }).clickhouse, signal, `${queryId}_page`),
        this.runInClickHouse(printQuery(counted, { teamId, server }).clickhouse, signal, `${queryId}_count`),
      ]);
      return { count: Number(total.data[0]?.[0] ?? 0), ids: rows.data.map((row) => String(row[0])) };
    } catch (error) {
      throw clientError(error, this.deps.limits) ?? error;
    }
  }

  /** Runs one statement with the query limits; with a `deadline` (a `performance.now()` time), within the time left until it. */
  private async runInClickHouse(statement: string, clientGone: AbortSignal, queryId: string, deadline?: number): Promise<CompactResult> {
    const settings = queryClickHouseSettings(this.deps.limits);
    if (deadline !== undefined) {
      const left = Math.ceil((deadline - performance.now()) / 1000);
      if (left <= 0) throw new ClickHouseError(`Code: ${TIMEOUT_EXCEEDED}. The query's statements used up its time limit`, TIMEOUT_EXCEEDED);
      settings.max_execution_time = Math.min(settings.max_execution_time!, left);
    }
    // Only KILL QUERY stops it: ClickHouse 18.16 crashed (SIGSEGV writing JSON) when the HTTP request
    // of a query it was cancelling had been closed as well, so that request is left to end by itself.
    const kill = () => {
      this.deps.clickhouse.kill(queryId).catch(() => undefined);
    };
    if (clientGone.aborted) throw new HttpError(499, 'invalid_request', 'client_closed_request', 'The client went away before the query ran.');
    clientGone.addEventListener('abort', kill, { once: true });
    try {
      // The printer's output is SQL this code base wrote: every name is an allow-listed one, every value escaped.
      return await this.deps.clickhouse.queryCompact(Sql.trusted(statement), { settings, queryId });
    } catch (error) {
      // A loaded server may not stop a statement at its time limit; the client's wait then ends
      // first, and the statement would run on unwatched.
      if (!isRequestTimeout(error)) throw error;
      kill();
      throw new ClickHouseError(`Code: ${TIMEOUT_EXCEEDED}. The statement outlasted the endpoint's wait and was killed`, TIMEOUT_EXCEEDED, { cause: error });
    } finally {
      clientGone.removeEventListener('abort', kill);
    }
  }
}

import { Sql, type ClickHouse } from '@tributary/clickhouse';
import { queueEventDeletion } from '@tributary/deletions';
import { printQuery } from '@tributary/hogql';
import { badRequest, serviceUnavailable } from '@tributary/http';
import { planSplit, splitPersonUuid } from '@tributary/ingestion';
import { SendNotStartedError } from '@tributary/kafka';
import { personDisplayName, propertiesTimeline, propertyChanges, type TimelinePoint } from '@tributary/persons';
import { withTransaction, type Pool } from '@tributary/postgres';
import { cohortsOfPerson } from '../cohorts/cohorts-of-person.js';
import type { CohortRecord, CohortStore } from '../cohorts/cohort-store.js';
import type { PersonActivityLog } from './person-activity.js';
import type { PersonCopies } from './person-copies.js';
import type { PersonEventPublisher } from './person-event-publisher.js';
import { propertiesTimelineQuery } from './properties-timeline-query.js';
import type { DistinctIdChange, ManagementPersonStore, PersonRecord } from './management-person-store.js';

export interface PersonServiceDeps {
  pool: Pool;
  clickhouse: ClickHouse;
  persons: ManagementPersonStore;
  activity: PersonActivityLog;
  cohorts: CohortStore;
  copies: PersonCopies;
  events: PersonEventPublisher;
}

/** Who asks for a change, and in which project (whose token the change travels with). */
export interface Actor {
  teamId: number;
  token: string;
  userId: number | null;
}


/**
 * What the persons API does beyond reading rows: property changes go through ingestion as
 * events; deletes and splits change Postgres in one transaction with their activity entries,
 * then bring the ClickHouse copies and decide's cache in step.
 */
export class PersonService {
  constructor(private readonly deps: PersonServiceDeps) {}

  /** Sends `$set`-style changes as an event of the person, so ingest applies them in order with the SDKs'. */
  private async publish(actor: Actor, person: PersonRecord, event: string, properties: Record<string, unknown>): Promise<void> {
    const distinctId = person.distinct_ids[0];
    if (distinctId === undefined) throw badRequest(`Person ${person.id} has no distinct id to send the change as.`);
    try {
      await this.deps.events.publish(actor.token, distinctId, event, properties);
    } catch (error) {
      const message = (error as Error).message;
      // A send under way past its deadline may still be written: the retry is then a repeat of the same change.
      throw serviceUnavailable(
        error instanceof SendNotStartedError
          ? `The change could not be queued for ingestion (${message}); nothing was changed, retry.`
          : `The change was not confirmed as queued for ingestion (${message}); retry it, which changes nothing more if it was.`,
      );
    }
  }

  private async recordUpdate(actor: Actor, person: PersonRecord, after: Record<string, unknown>): Promise<void> {
    await this.deps.activity.record(this.deps.pool, {
      teamId: person.team_id,
      personId: person.id,
      activity: 'updated',
      userId: actor.userId,
      detail: { name: personDisplayName(after, person.distinct_ids), changes: propertyChanges(person.properties, after) },
    });
  }

  /** Sets properties; returns the person as it will be once ingest applied the change. */
  async setProperties(actor: Actor, person: PersonRecord, properties: Record<string, unknown>): Promise<PersonRecord> {
    await this.publish(actor, person, '$set', { $set: properties });
    const after = { ...person.properties, ...properties };
    await this.recordUpdate(actor, person, after);
    return { ...person, properties: after };
  }

  async deleteProperty(actor: Actor, person: PersonRecord, key: string): Promise<void> {
    await this.publish(actor, person, '$delete_person_property', { $unset: [key] });
    const { [key]: _removed, ...after } = person.properties;
    await this.recordUpdate(actor, person, after);
  }

  /** Deletes persons, and queues the deletion of their events when asked. */
  async delete(actor: Actor, ids: readonly number[], deleteEvents: boolean): Promise<{ deleted: number; queued: number }> {
    const { teamId, userId } = actor;
    const result = await withTransaction(this.deps.pool, async (client) => {
      const removed = await this.deps.persons.delete(client, teamId, ids);
      let queued = 0;
      for (const person of removed.persons) {
        const distinctIds = removed.distinctIds.filter((d) => d.personUuid === person.uuid).map((d) => d.distinctId);
        if (deleteEvents) {
          await queueEventDeletion(client, { teamId, personUuid: person.uuid, distinctIds, requestedBy: userId });
          queued += 1;
        }
        await this.deps.activity.record(client, {
          teamId,
          personId: person.id,
          activity: 'deleted',
          userId,
          detail: { name: personDisplayName(person.properties, person.distinct_ids), uuid: person.uuid, distinct_ids: distinctIds, delete_events: deleteEvents },
        });
      }
      return { ...removed, queued };
    });
    await this.deps.copies.deleted(teamId, result.persons, result.distinctIds);
    return { deleted: result.persons.length, queued: result.queued };
  }

  /**
   * Gives every distinct id but the kept one a person of its own. False when there is no such
   * person; a person with one distinct id is left as it is.
   */
  async split(actor: Actor, id: number, mainDistinctId: string | undefined): Promise<boolean> {
    const { teamId } = actor;
    const outcome = await withTransaction(this.deps.pool, async (client) => {
      const person = await this.deps.persons.lock(client, teamId, id);
      if (!person) return null;
      const plan = planSplit(person.distinct_ids, mainDistinctId);
      const created: PersonRecord[] = [];
      const moved: DistinctIdChange[] = [];
      for (const distinctId of plan?.split ?? []) {
        const result = await this.deps.persons.moveToOwnPerson(client, teamId, distinctId, splitPersonUuid(teamId, distinctId), person.version + 1);
        created.push(result.person);
        moved.push(result.distinctId);
      }
      if (plan && plan.split.length > 0) {
        await this.deps.activity.record(client, {
          teamId,
          personId: person.id,
          activity: 'split',
          userId: actor.userId,
          detail: { name: personDisplayName(person.properties, person.distinct_ids), kept: plan.keep, split: created.map((p) => ({ distinct_id: p.distinct_ids[0], person_id: p.id, uuid: p.uuid })) },
        });
      }
      return { created, moved };
    });
    if (!outcome) return false;
    await this.deps.copies.split(teamId, outcome.created, outcome.moved);
    return true;
  }

  /** The cohorts the person is in now. */
  cohorts(person: PersonRecord): Promise<CohortRecord[]> {
    return cohortsOfPerson(this.deps.cohorts, person, new Date());
  }

  /** How the person's properties changed over their events. */
  async propertiesTimeline(person: PersonRecord): Promise<TimelinePoint[]> {
    // The printer adds the project's guard, as to any query.
    const printed = printQuery(propertiesTimelineQuery(person.uuid), { teamId: person.team_id });
    const rows = await this.deps.clickhouse.query<{ ts: string; person_properties: string }>(Sql.trusted(printed.clickhouse));
    return propertiesTimeline(rows.map((r) => ({ timestamp: `${r.ts.replace(' ', 'T')}Z`, properties: JSON.parse(r.person_properties || '{}') as Record<string, unknown> })));
  }
}

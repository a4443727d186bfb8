import type { CohortDefinition, FlagDefinition } from './definition.js';
import { groupsToFetch, needsStoredPerson, storedDataNeeds } from './stored-data-needs.js';

const flag = (key: string, filters: FlagDefinition['filters'], active = true): FlagDefinition => ({ id: 1, key, active, filters });
const mapping = { 0: 'company', 1: 'team' };
const staticCohort = new Map<number, CohortDefinition>([[7, { id: 7, kind: 'static' }]]);
const dynamicOnly = new Map<number, CohortDefinition>([[8, { id: 8, kind: 'dynamic', filters: {} }]]);
const cohortFlag = flag('in-cohort', { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 7 }] }] });
const companyFlag = flag('big', { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'seats', value: 10, operator: 'gte', type: 'group', group_type_index: 0 }] }, { properties: [{ key: 'plan', value: 'pro', type: 'group', group_type_index: 0 }] }] });

describe('stored data a project’s flags read', () => {
  it('needs listed cohort membership only when a live flag filters on a cohort and a static cohort exists', () => {
    expect(storedDataNeeds([cohortFlag], staticCohort, mapping).listedCohorts).toBe(true);
    expect(storedDataNeeds([cohortFlag], dynamicOnly, mapping).listedCohorts).toBe(false);
    expect(storedDataNeeds([companyFlag], staticCohort, mapping).listedCohorts).toBe(false);
    expect(storedDataNeeds([{ ...cohortFlag, active: false }], staticCohort, mapping).listedCohorts).toBe(false);
  });

  it('needs listed membership too when the project has a precomputed (behavioural) cohort', () => {
    const precomputed = new Map<number, CohortDefinition>([[7, { id: 7, kind: 'precomputed' }]]);
    expect(storedDataNeeds([cohortFlag], precomputed, mapping).listedCohorts).toBe(true);
  });

  it('lists the group property keys of live group flags by group type name', () => {
    const needs = storedDataNeeds([companyFlag, flag('rollout', { aggregation_group_type_index: 1, groups: [{ properties: [], rollout_percentage: 50 }] })], new Map(), mapping);
    expect(needs.groupKeys).toEqual(new Map([['company', new Set(['seats', 'plan'])], ['team', new Set()]]));
  });

  it('reads the clock when a live flag or a cohort compares a date, at any depth', () => {
    const dated = { key: 'signed_up', value: '-7d', operator: 'is_date_after' as const, type: 'person' as const };
    expect(storedDataNeeds([flag('recent', { groups: [{ properties: [dated] }] })], new Map(), mapping).clock).toBe(true);
    expect(storedDataNeeds([flag('recent', { super_groups: [{ properties: [dated] }] })], new Map(), mapping).clock).toBe(true);
    expect(storedDataNeeds([flag('recent', { groups: [{ properties: [dated] }] }, false)], new Map(), mapping).clock).toBe(false);
    const datedCohort = new Map<number, CohortDefinition>([[9, { id: 9, kind: 'dynamic', filters: { type: 'OR', values: [{ type: 'AND', values: [dated] }] } }]]);
    expect(storedDataNeeds([cohortFlag], datedCohort, mapping).clock).toBe(true);
    expect(storedDataNeeds([cohortFlag, companyFlag], dynamicOnly, mapping).clock).toBe(false);
  });

  it('fetches a group’s stored properties only when the request leaves out a key the flags compare', () => {
    const needs = storedDataNeeds([companyFlag], new Map(), mapping);
    const groups = { company: 'acme', team: 'core' };
    expect(groupsToFetch(needs, groups, {})).toEqual({ company: 'acme' });
    expect(groupsToFetch(needs, groups, { company: { seats: 3 } })).toEqual({ company: 'acme' });
    expect(groupsToFetch(needs, groups, { company: { seats: 3, plan: null } })).toEqual({});
  });
});

describe('flags that need the stored person', () => {
  const onKey = (key: string) => flag(key, { groups: [{ properties: [{ key, value: 'x', type: 'person' }] }] });

  it('needs it for a person property the request does not carry, or a cohort', () => {
    expect(needsStoredPerson(onKey('plan'), { plan: 'pro' })).toBe(false);
    expect(needsStoredPerson(onKey('plan'), {})).toBe(true);
    expect(needsStoredPerson(cohortFlag, { id: 7 })).toBe(true);
    expect(needsStoredPerson(companyFlag, {})).toBe(false);
  });

  it('counts only keys the request itself carries, not what every object inherits', () => {
    expect(needsStoredPerson(onKey('toString'), {})).toBe(true);
    expect(needsStoredPerson(onKey('constructor'), JSON.parse('{"__proto__":{"constructor":"x"}}'))).toBe(true);
  });
});

import { insightAccessLevel, resolveAccessLevel, type AccessInputs } from './access-levels.js';

const member: AccessInputs = { isProjectAdmin: false, isCreator: false, memberEntry: null, defaultEntry: null, othersAtMost: 'editor' };

describe('resolveAccessLevel', () => {
  it('without entries everyone in the project can edit', () => {
    expect(resolveAccessLevel(member)).toBe('editor');
  });

  it('the default entry applies to members without one of their own, whose entry wins', () => {
    expect(resolveAccessLevel({ ...member, defaultEntry: 'none' })).toBe('none');
    expect(resolveAccessLevel({ ...member, defaultEntry: 'none', memberEntry: 'viewer' })).toBe('viewer');
    expect(resolveAccessLevel({ ...member, defaultEntry: 'editor', memberEntry: 'none' })).toBe('none');
  });

  it('othersAtMost caps members without an entry of their own, never those with one', () => {
    expect(resolveAccessLevel({ ...member, othersAtMost: 'viewer' })).toBe('viewer');
    expect(resolveAccessLevel({ ...member, othersAtMost: 'viewer', defaultEntry: 'none' })).toBe('none');
    expect(resolveAccessLevel({ ...member, othersAtMost: 'viewer', memberEntry: 'editor' })).toBe('editor');
  });

  it('admins and the creator always edit', () => {
    expect(resolveAccessLevel({ ...member, isProjectAdmin: true, memberEntry: 'none' })).toBe('editor');
    expect(resolveAccessLevel({ ...member, isCreator: true, defaultEntry: 'none', othersAtMost: 'viewer' })).toBe('editor');
  });
});

describe('insightAccessLevel (PostHog CanEditInsight)', () => {
  it('an insight on no dashboard is editable by the project', () => {
    expect(insightAccessLevel([])).toBe('editor');
  });

  it('editing one of its dashboards is enough; viewing them all, or seeing none, leaves it read-only', () => {
    expect(insightAccessLevel(['viewer', 'editor'])).toBe('editor');
    expect(insightAccessLevel(['viewer'])).toBe('viewer');
    expect(insightAccessLevel(['none'])).toBe('viewer');
    expect(insightAccessLevel(['none', 'viewer'])).toBe('viewer');
  });
});

import { PropertyFilterError } from '@tributary/property-filters';
import { HogQLError, actionExpr, loadHogQLParser, matchesActionRefs, parseSelect, printHogQLExpr, printQuery, selectorRegex, type ActionDefinition, type FilterContext } from './index.js';

const context: FilterContext = { now: new Date('2026-05-10T12:00:00Z'), cohorts: new Map([[3, { id: 3, static: true, distinctIds: ['d1'] }]]) };
const hogql = (action: Omit<ActionDefinition, 'id' | 'name'>) => printHogQLExpr(actionExpr({ id: 1, name: 'a', ...action }, context));

beforeAll(() => loadHogQLParser());

describe('an action is the OR of its steps, a step the AND of its conditions', () => {
  it('tests the event name, and every event for a step or an action without conditions', () => {
    expect(hogql({ steps: [{ event: 'signup' }] })).toBe("event = 'signup'");
    expect(hogql({ steps: [{ event: 'signup' }, { event: 'purchase' }] })).toBe("(event = 'signup') OR (event = 'purchase')");
    expect(hogql({ steps: [] })).toBe('true');
    expect(hogql({ steps: [{}] })).toBe('true');
  });

  it('matches the URL exactly, by like %url% (contains), or by a regular expression', () => {
    expect(hogql({ steps: [{ event: '$pageview', url: 'https://x.com/a', url_matching: 'exact' }] })).toBe("(event = '$pageview') AND (properties.$current_url = 'https://x.com/a')");
    expect(hogql({ steps: [{ url: '/pricing' }] })).toBe("properties.$current_url LIKE '%/pricing%'");
    expect(hogql({ steps: [{ url: '^https://x\\.com', url_matching: 'regex' }] })).toBe("match(properties.$current_url, '^https://x\\\\.com')");
  });

  it('tests the element only on $autocapture, text and href with their matching, as element filters', () => {
    expect(hogql({ steps: [{ event: '$pageview', text: 'Buy', selector: 'button' }] })).toBe("event = '$pageview'");
    const clicked = hogql({ steps: [{ event: '$autocapture', text: 'Buy', text_matching: 'contains', href: '/checkout', tag_name: 'a' }] });
    expect(clicked).toContain("match(elements_chain, '(?:^|;)a(?:\\\\.|$|;|:)')");
    expect(clicked).toContain("extractAll(elements_chain, '(?:^|[:\"])href=\"((?:\\\\\\\\.|[^\"\\\\\\\\])*)\"')");
    expect(clicked).toContain("positionCaseInsensitive(element_value, 'Buy')");
  });

  it("adds the step's property filters, cohorts included, and refuses a bad one naming the step", () => {
    expect(hogql({ steps: [{ event: 'purchase', properties: [{ key: 'id', value: 3, type: 'cohort' }] }] })).toBe("(event = 'purchase') AND (distinct_id IN ['d1'])");
    expect(() => hogql({ steps: [{ event: 'x' }, { properties: [{ key: 'n', value: '(', operator: 'regex' }] }] })).toThrow(PropertyFilterError);
    expect(() => hogql({ steps: [{ event: '$autocapture', selector: 'a:hover' }] })).toThrow(/selector "a:hover"/);
  });
});

describe('a selector as a regular expression over elements_chain', () => {
  const chain = 'span.label:text="Buy";button.btn.primary:attr__data-attr="buy"attr_id="buy-button"nth-child="2";form:attr_id="checkout";body';
  const matches = (selector: string, elements = chain) => new RegExp(selectorRegex(selector)).test(elements);

  it.each([
    ['the clicked element by tag', 'span', true],
    ['an element around it, by tag and classes in any order', 'button.primary.btn', true],
    ['a class the element lacks', 'button.secondary', false],
    ['an id', '#buy-button', true],
    ['an attribute', '[data-attr="buy"]', true],
    ['an id and an attribute together', 'button[data-attr=buy]#buy-button', true],
    ['a direct child', 'button > span', true],
    ['a child that is not direct', 'form > span', false],
    ['a descendant', 'form span', true],
    ['ancestors the wrong way round', 'span button', false],
    ['a tag that only starts like one', 'butto', false],
  ])('%s: %s', (_rule, selector, expected) => {
    expect(matches(selector)).toBe(expected);
  });
});

describe('matchesAction in HogQL', () => {
  const signup = actionExpr({ id: 5, name: 'Signed up', steps: [{ event: 'signup' }] }, context);
  const actions = new Map<string | number, typeof signup>([['Signed up', signup], [5, signup]]);
  const print = async (query: string) => printQuery(await parseSelect(query), { teamId: 7, actions }).clickhouse;

  it("prints as the action's condition over the row, under the project's guard", async () => {
    const sql = await print("SELECT count() FROM events WHERE matchesAction('Signed up')");
    expect(sql).toContain("(`events`.`event` = 'signup')");
    expect(sql).toContain('`events`.team_id = 7');
    expect(await print('SELECT count() FROM events WHERE matchesAction(5)')).toBe(sql);
  });

  it('names what a query asks for, and refuses an action the project does not have by name', async () => {
    expect(matchesActionRefs(await parseSelect("SELECT 1 FROM events WHERE matchesAction('a') OR matchesAction(2)"))).toEqual(['a', 2]);
    await expect(print("SELECT count() FROM events WHERE matchesAction('Nope')")).rejects.toThrow(new HogQLError('matchesAction: the project has no action "Nope"', 'hogql_query_error'));
    await expect(print('SELECT count() FROM events WHERE matchesAction(event)')).rejects.toThrow(/takes one argument/);
  });
});

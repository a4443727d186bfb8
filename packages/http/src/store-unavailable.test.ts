import { isStoreUnavailable } from './store-unavailable.js';

/** The shape of @tributary/clickhouse's ClickHouseError, which this package does not depend on. */
function clickHouseError(code: number, message: string): Error {
  return Object.assign(new Error(message), { name: 'ClickHouseError', code });
}

describe('isStoreUnavailable', () => {
  it('takes a shard or ZooKeeper being away on a cluster as the store being away', () => {
    expect(isStoreUnavailable(clickHouseError(279, 'Code: 279, e.displayText() = DB::NetException: All connection tries failed'))).toBe(true);
    expect(isStoreUnavailable(clickHouseError(242, 'Code: 242, e.displayText() = DB::Exception: Table is in readonly mode'))).toBe(true);
    expect(isStoreUnavailable(clickHouseError(999, 'Code: 999, e.displayText() = Coordination::Exception: Connection loss'))).toBe(true);
  });

  it('takes a wrong query as the work being wrong', () => {
    expect(isStoreUnavailable(clickHouseError(47, 'Code: 47, e.displayText() = DB::Exception: Unknown identifier: x'))).toBe(false);
    expect(isStoreUnavailable(Object.assign(new Error('x'), { code: 279 }))).toBe(false);
  });

  it('looks through a wrapping error to its cause', () => {
    expect(isStoreUnavailable(new Error('query failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) }))).toBe(true);
  });
});

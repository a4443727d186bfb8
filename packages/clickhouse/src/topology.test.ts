import { alteredTable, dataTableName, onCluster, renderStatement, type Topology } from './topology.js';

const single: Topology = { cluster: null, database: 'tributary' };
const cluster: Topology = { cluster: 'tributary', database: 'tributary' };

describe('renderStatement', () => {
  it('leaves every statement as written on a single server', () => {
    const statement = 'CREATE TABLE IF NOT EXISTS events (uuid UUID) ENGINE = ReplacingMergeTree(inserted_at) ORDER BY uuid';
    expect(renderStatement(statement, single)).toEqual([statement]);
    expect(onCluster(single)).toBe('');
    expect(dataTableName(single, 'events')).toBe('events');
    expect(alteredTable(single, 'events')).toBe('`tributary`.`events`');
  });

  it('shards events behind a Distributed table keyed by distinct id, replicated within each shard', () => {
    expect(renderStatement('CREATE TABLE IF NOT EXISTS events (uuid UUID) ENGINE = ReplacingMergeTree(inserted_at) ORDER BY uuid', cluster)).toEqual([
      "CREATE TABLE IF NOT EXISTS tributary.sharded_events ON CLUSTER tributary (uuid UUID) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/tributary.events', '{replica}', inserted_at) ORDER BY uuid",
      'CREATE TABLE IF NOT EXISTS tributary.events ON CLUSTER tributary AS tributary.sharded_events ENGINE = Distributed(tributary, tributary, sharded_events, sipHash64(distinct_id))',
    ]);
    expect(dataTableName(cluster, 'events')).toBe('sharded_events');
  });

  it('replicates the other tables on every server, under one ZooKeeper path', () => {
    expect(renderStatement('CREATE TABLE IF NOT EXISTS person (id UUID) ENGINE = MergeTree() ORDER BY id', cluster)).toEqual([
      "CREATE TABLE IF NOT EXISTS tributary.person ON CLUSTER tributary (id UUID) ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/tributary.person', '{replica}') ORDER BY id",
    ]);
    expect(dataTableName(cluster, 'person')).toBe('person');
  });

  it('alters a sharded table through one replica of each shard and makes its Distributed table again; a table on every server where the client is', () => {
    expect(renderStatement("ALTER TABLE events MODIFY COLUMN inserted_at DateTime('UTC') DEFAULT now()", cluster)).toEqual([
      "ALTER TABLE `tributary`.`sharded_events` ON CLUSTER tributary_one_replica_per_shard MODIFY COLUMN inserted_at DateTime('UTC') DEFAULT now()",
      'DROP TABLE IF EXISTS tributary.events ON CLUSTER tributary',
      'CREATE TABLE IF NOT EXISTS tributary.events ON CLUSTER tributary AS tributary.sharded_events ENGINE = Distributed(tributary, tributary, sharded_events, sipHash64(distinct_id))',
    ]);
    expect(renderStatement('ALTER TABLE person ADD COLUMN _timestamp DateTime DEFAULT now()', cluster)).toEqual([
      'ALTER TABLE `tributary`.`person` ADD COLUMN _timestamp DateTime DEFAULT now()',
    ]);
  });

  it('refuses a statement it cannot place on a cluster rather than running it on one server', () => {
    expect(() => renderStatement('CREATE TABLE IF NOT EXISTS t (x UInt8) ENGINE = Memory', cluster)).toThrow(/no MergeTree engine/);
    expect(() => renderStatement('RENAME TABLE a TO b', cluster)).toThrow(/cannot render/);
  });
});

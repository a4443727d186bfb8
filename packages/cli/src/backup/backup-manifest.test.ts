import { BACKUP_FORMAT, parseManifest, type BackupManifest } from './backup-manifest.js';

const manifest: BackupManifest = {
  format: BACKUP_FORMAT,
  created_at: '2026-11-29T10:00:00.000Z',
  postgres: { file: 'postgres.dump', migrations: ['0001_control_plane'] },
  clickhouse: { migrations: [1, 2], tables: [{ table: 'events', columns: ['uuid', 'event'], files: [{ file: 'clickhouse/events.0.native.gz', partition: '202601' }] }] },
};
const edited = (change: (m: any) => void) => {
  const copy = structuredClone(manifest) as any;
  change(copy);
  return JSON.stringify(copy);
};

describe('a backup manifest is read only when whole and well-formed', () => {
  it('reads what a backup writes', () => {
    expect(parseManifest(JSON.stringify(manifest))).toEqual(manifest);
  });

  it('refuses text that is not JSON, another format, and missing parts, naming what is wrong', () => {
    expect(() => parseManifest('{"format": 1,')).toThrow('manifest.json is not JSON');
    expect(() => parseManifest(edited((m) => (m.format = 2)))).toThrow(/\/format must be equal to constant/);
    expect(() => parseManifest(edited((m) => delete m.clickhouse))).toThrow(/must have required property 'clickhouse'/);
  });

  it('refuses a file outside the backup folder and a table or column name that is not a plain identifier', () => {
    expect(() => parseManifest(edited((m) => (m.postgres.file = '../../etc/passwd')))).toThrow(/\/postgres\/file/);
    expect(() => parseManifest(edited((m) => (m.postgres.file = '/etc/passwd')))).toThrow(/\/postgres\/file/);
    expect(() => parseManifest(edited((m) => (m.clickhouse.tables[0].table = 'events; DROP TABLE person')))).toThrow(/\/clickhouse\/tables\/0\/table/);
    expect(() => parseManifest(edited((m) => (m.clickhouse.tables[0].columns = ['uuid`'])))).toThrow(/\/clickhouse\/tables\/0\/columns\/0/);
  });
});

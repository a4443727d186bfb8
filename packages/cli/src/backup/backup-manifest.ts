import { Ajv, type JSONSchemaType } from 'ajv';

/** What a backup folder holds, written last, so a folder without one is a backup that did not finish. */
export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  created_at: string;
  postgres: PostgresDump;
  clickhouse: ClickHouseDump;
}

export interface PostgresDump {
  /** The pg_dump archive, relative to the backup folder. */
  file: string;
  /** The migrations the database had run, by name. */
  migrations: string[];
}

export interface TableDump {
  /** The table rows were read through and are inserted through. */
  table: string;
  columns: string[];
  /** One gzipped Native file per partition (relative paths), with the partition's value when the table has partitions. */
  files: { file: string; partition?: string }[];
}

export interface ClickHouseDump {
  /** The migration versions the database had applied. */
  migrations: number[];
  tables: TableDump[];
}

export const BACKUP_FORMAT = 1;
export const MANIFEST_FILE = 'manifest.json';

const relativePath = { type: 'string', pattern: '^[A-Za-z0-9_][A-Za-z0-9_./-]*$', not: { pattern: '\\.\\.' } } as const;
const identifier = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' } as const;

const schema: JSONSchemaType<BackupManifest> = {
  type: 'object',
  required: ['format', 'created_at', 'postgres', 'clickhouse'],
  properties: {
    format: { type: 'number', const: BACKUP_FORMAT },
    created_at: { type: 'string' },
    postgres: {
      type: 'object',
      required: ['file', 'migrations'],
      properties: { file: relativePath, migrations: { type: 'array', items: { type: 'string' } } },
    },
    clickhouse: {
      type: 'object',
      required: ['migrations', 'tables'],
      properties: {
        migrations: { type: 'array', items: { type: 'integer' } },
        tables: {
          type: 'array',
          items: {
            type: 'object',
            required: ['table', 'columns', 'files'],
            properties: {
              table: identifier,
              columns: { type: 'array', items: identifier, minItems: 1 },
              files: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['file'],
                  properties: { file: relativePath, partition: { type: 'string', nullable: true } },
                },
              },
            },
          },
        },
      },
    },
  },
};

const validate = new Ajv({ allErrors: true }).compile(schema);

/** The manifest of a backup folder, checked: a file edited by hand or cut short is refused, naming what is wrong. */
export function parseManifest(text: string): BackupManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${MANIFEST_FILE} is not JSON`);
  }
  if (!validate(value)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
    throw new Error(`${MANIFEST_FILE} is not a Tributary backup manifest of format ${BACKUP_FORMAT}: ${problems.join('; ')}`);
  }
  return value;
}

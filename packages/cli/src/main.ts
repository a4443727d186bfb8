import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { loadConfig } from '@tributary/config';
import { migrateClickHouse } from '@tributary/clickhouse';
import { migratePostgres, createPool, withTransaction, type Pool } from '@tributary/postgres';
import { createKafka, ensureTopics } from '@tributary/kafka';
import { createLogger } from '@tributary/logger';
import { ControlPlaneStore, MEMBERSHIP_LEVEL } from '@tributary/control-plane';
import { isGrantedScope, type GrantedScope } from '@tributary/auth';
import { createClickHouse, topologyOf } from '@tributary/clickhouse';
import { createRedis } from '@tributary/redis';
import { MUTATION_REQUEST_TIMEOUT_MS, listDeletionRequests, runDeletionBatch } from '@tributary/deletions';
import { addMember, issueKey, listOrganizations, listProjects } from './accounts.js';
import { bootstrap } from './bootstrap.js';
import { formatCredentials, readCredentials } from './credentials-file.js';
import { runDemoData } from './demo-data/demo-data-command.js';
import { runImport } from './import/import-command.js';
import { runBackup, runRestore } from './backup/backup-command.js';
import { autoMaterialize, listProperties, materializeProperties, type PropertiesDeps } from './properties/materialized-properties.js';

const config = loadConfig(process.env, {}, 'cli');
const logger = createLogger('cli', 'warn');

async function withPool<T>(work: (pool: Pool) => Promise<T>): Promise<T> {
  const pool = createPool(config, { max: 2 });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

function parseScopes(value: string): GrantedScope[] {
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !isGrantedScope(s));
  if (unknown.length > 0 || scopes.length === 0) throw new InvalidArgumentError(`unknown scopes: ${unknown.join(', ') || '(none given)'}`);
  return scopes as GrantedScope[];
}

function parseIds(value: string): number[] {
  const ids = value.split(',').map((s) => Number(s.trim()));
  if (ids.some((id) => !Number.isInteger(id) || id <= 0)) throw new InvalidArgumentError('expected a comma-separated list of project ids');
  return ids;
}

function parseUuid(value: string): string {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) throw new InvalidArgumentError('expected a UUID');
  return value.toLowerCase();
}

function parseLevel(value: string): number {
  if (!(value in MEMBERSHIP_LEVEL)) throw new InvalidArgumentError(`expected one of: ${Object.keys(MEMBERSHIP_LEVEL).join(', ')}`);
  return MEMBERSHIP_LEVEL[value as keyof typeof MEMBERSHIP_LEVEL];
}

/** A JSON line per item (or a line saying there are none), or with `ids` the ids alone, comma-separated. */
function printList(items: { id: string | number }[], none: string, ids = false): void {
  if (ids) console.log(items.map((item) => item.id).join(','));
  else if (items.length === 0) console.log(none);
  else for (const item of items) console.log(JSON.stringify(item));
}

const program = new Command('tributary').description('Operate a Tributary installation').showHelpAfterError();

program
  .command('migrate')
  .description('apply pending Postgres and ClickHouse schema migrations')
  .action(async () => {
    const postgres = await migratePostgres(config);
    const clickhouse = await migrateClickHouse(config);
    console.log(`postgres: ${postgres.length ? postgres.join(', ') : 'up to date'}`);
    console.log(`clickhouse: ${clickhouse.length ? clickhouse.join(', ') : 'up to date'}`);
  });

program
  .command('kafka:topics')
  .description('create the event topics that do not exist yet')
  .action(async () => {
    const admin = createKafka(config, logger, 'cli').admin();
    await admin.connect();
    try {
      const created = await ensureTopics(admin, config.kafkaTopicPrefix, config.kafkaPartitions, { retentionHours: config.kafkaRetentionHours });
      console.log(`kafka topics: ${created.length ? `created ${created.join(', ')}` : 'all present'}`);
    } finally {
      await admin.disconnect();
    }
  });

program
  .command('bootstrap')
  .description('create (once) a demo organization, user, project and all-scopes personal API key')
  .option('--credentials-file <path>', 'where to write the shell variables', path.resolve('.tributary/credentials.env'))
  .action(async (options: { credentialsFile: string }) => {
    const { credentials, reused, replacedFileKeptAs } = await withPool((pool) => bootstrap(pool, config, options.credentialsFile));
    if (replacedFileKeptAs) {
      console.error(`tributary: ${options.credentialsFile} named a project or key this database does not have; it is replaced, the old file kept as ${replacedFileKeptAs}`);
    }
    console.log(`${reused ? 'Reusing' : 'Created'} the demo project (credentials in ${options.credentialsFile}):`);
    process.stdout.write(formatCredentials(credentials));
  });

program
  .command('projects:create')
  .description('create a project in an organization (a new organization when none is given)')
  .requiredOption('--name <name>', 'project name')
  .option('--organization <uuid>', 'organization id')
  .option('--owner-email <email>', 'user made owner of a new organization')
  .action(async (options: { name: string; organization?: string; ownerEmail?: string }) => {
    const project = await withPool((pool) =>
      withTransaction(pool, async (client) => {
        const store = new ControlPlaneStore(client, config.apiKeyPepper);
        let organizationId = options.organization;
        if (!organizationId) {
          organizationId = (await store.createOrganization(`${options.name} organization`)).id;
          if (options.ownerEmail) {
            const user = (await store.findUserByEmail(options.ownerEmail)) ?? (await store.createUser({ email: options.ownerEmail }));
            await store.addMembership(organizationId, user.id, MEMBERSHIP_LEVEL.owner);
          }
        }
        return store.createProject(organizationId, options.name);
      }),
    );
    console.log(JSON.stringify({ id: project.id, name: project.name, organization_id: project.organization_id, api_token: project.api_token }));
  });

program
  .command('orgs:list')
  .description('list organizations (id and name), or those a user is in with their level')
  .option('--email <email>', "only this user's organizations")
  .option('--ids', 'print only the ids, comma-separated, for a shell variable')
  .action(async (options: { email?: string; ids?: boolean }) => {
    const organizations = await withPool((pool) => listOrganizations(new ControlPlaneStore(pool, config.apiKeyPepper), options.email));
    printList(organizations, 'no organizations', options.ids);
  });

program
  .command('projects:list')
  .description("list projects (id, name, organization id): all, an organization's, or those a user can read")
  .option('--email <email>', "only projects of this user's organizations")
  .option('--organization <uuid>', "only this organization's projects", parseUuid)
  .option('--ids', 'print only the ids, comma-separated, for a shell variable')
  .action(async (options: { email?: string; organization?: string; ids?: boolean }) => {
    const projects = await withPool((pool) => listProjects(new ControlPlaneStore(pool, config.apiKeyPepper), options));
    printList(projects, 'no projects', options.ids);
  });

program
  .command('keys:create')
  .description('issue a personal API key for a user; the key is printed once')
  .requiredOption('--email <email>', 'the key belongs to this user (created when missing)')
  .requiredOption('--scopes <list>', 'comma-separated scopes, or *', parseScopes)
  .option('--projects <ids>', "limit the key to these project ids, each in one of the user's organizations (projects:list --email)", parseIds)
  .option('--label <label>', 'a name for the key', 'cli')
  .action(async (options: { email: string; scopes: GrantedScope[]; projects?: number[]; label: string }) => {
    const { key, record } = await withPool((pool) => issueKey(new ControlPlaneStore(pool, config.apiKeyPepper), options));
    console.log(JSON.stringify({ id: record.id, key, scopes: record.scopes, scoped_projects: record.scoped_projects }));
  });

program
  .command('keys:list')
  .description("list a user's personal API keys (masked; the values are never shown again)")
  .requiredOption('--email <email>', 'the user')
  .action(async (options: { email: string }) => {
    const keys = await withPool(async (pool) => {
      const store = new ControlPlaneStore(pool, config.apiKeyPepper);
      const user = await store.findUserByEmail(options.email);
      if (!user) throw new Error(`no user has the e-mail ${options.email}`);
      return store.keysOfUser(user.id);
    });
    for (const k of keys) console.log(JSON.stringify({ id: k.id, label: k.label, mask_value: k.mask_value, scopes: k.scopes, scoped_projects: k.scoped_projects, last_used_at: k.last_used_at }));
    if (keys.length === 0) console.log('no personal API keys');
  });

program
  .command('keys:revoke')
  .description('revoke one of a user\'s personal API keys, at once')
  .requiredOption('--email <email>', 'the user')
  .requiredOption('--id <uuid>', 'the key id (from keys:list)', parseUuid)
  .action(async (options: { email: string; id: string }) => {
    await withPool(async (pool) => {
      const store = new ControlPlaneStore(pool, config.apiKeyPepper);
      const user = await store.findUserByEmail(options.email);
      if (!user || !(await store.deleteKeyOfUser(user.id, options.id))) throw new Error(`${options.email} has no personal API key ${options.id}`);
    });
    console.log(JSON.stringify({ revoked: options.id }));
  });

program
  .command('users:operator')
  .description('make a user an instance operator, who may read installation-wide status (/api/status/), or stop being one')
  .requiredOption('--email <email>', 'the user')
  .option('--revoke', 'take the flag away instead')
  .action(async (options: { email: string; revoke?: boolean }) => {
    const user = await withPool(async (pool) => {
      const store = new ControlPlaneStore(pool, config.apiKeyPepper);
      const found = await store.findUserByEmail(options.email);
      if (!found) throw new Error(`no user has the e-mail ${options.email}; create it with users:create`);
      await store.setInstanceOperator(found.id, !options.revoke);
      return found;
    });
    console.log(JSON.stringify({ email: user.email, instance_operator: !options.revoke }));
  });

program
  .command('users:create')
  .description('create a user, who can then be added to organizations and issued keys')
  .requiredOption('--email <email>', 'e-mail address, unique among users')
  .option('--first-name <name>', 'first name', '')
  .option('--last-name <name>', 'last name', '')
  .action(async (options: { email: string; firstName: string; lastName: string }) => {
    const user = await withPool(async (pool) => {
      const store = new ControlPlaneStore(pool, config.apiKeyPepper);
      if (await store.findUserByEmail(options.email)) throw new Error(`a user with the e-mail ${options.email} already exists`);
      return store.createUser({ email: options.email, firstName: options.firstName, lastName: options.lastName });
    });
    console.log(JSON.stringify({ id: user.id, uuid: user.uuid, email: user.email, first_name: user.first_name, last_name: user.last_name }));
  });

program
  .command('members:add')
  .description('add a user to an organization, or change the level of one who is already in it')
  .requiredOption('--email <email>', 'the user (create it first with users:create)')
  .requiredOption('--organization <uuid>', 'organization id (orgs:list)', parseUuid)
  .option('--level <level>', "member, admin or owner (default: member for a new member; an existing member's level is kept)", parseLevel)
  .action(async (options: { email: string; organization: string; level?: number }) => {
    const membership = await withPool((pool) => addMember(new ControlPlaneStore(pool, config.apiKeyPepper), options));
    console.log(JSON.stringify(membership));
  });

const deletions = program.command('deletions').description('the queued event deletions that the weekly batch (Sundays 05:00 UTC) runs');

deletions
  .command('list')
  .description('show queued and finished deletion requests')
  .option('--pending', 'only the queued ones')
  .action(async (options: { pending?: boolean }) => {
    const requests = await withPool((pool) => listDeletionRequests(pool, options.pending ? 'pending' : 'all'));
    for (const r of requests) {
      console.log(JSON.stringify({ id: r.id, project: r.team_id, person: r.person_uuid, distinct_ids: r.distinct_ids, queued_at: r.created_at, done_at: r.done_at }));
    }
    if (requests.length === 0) console.log('no deletion requests');
  });

deletions
  .command('run-now')
  .description('run the deletion batch immediately instead of waiting for Sunday')
  .action(async () => {
    const clickhouse = createClickHouse(config, { requestTimeoutMs: MUTATION_REQUEST_TIMEOUT_MS });
    try {
      const result = await withPool((pool) => runDeletionBatch({ pool, clickhouse, topology: topologyOf(config), logger }));
      console.log(result.skipped ? 'another worker is running the batch; nothing done' : `deleted the events of ${result.requests} queued request(s)`);
    } finally {
      await clickhouse.close();
    }
  });

/** The stores the properties commands use, closed after `work`. Mutations rewrite every part of events: they get the deletions' long timeout. */
async function withPropertiesDeps<T>(work: (deps: PropertiesDeps) => Promise<T>): Promise<T> {
  const clickhouse = createClickHouse(config, { requestTimeoutMs: MUTATION_REQUEST_TIMEOUT_MS });
  const redis = createRedis(config);
  try {
    return await work({ clickhouse, redis, topology: topologyOf(config), maxColumns: config.materializedColumnsMax, mutationTimeoutMs: MUTATION_REQUEST_TIMEOUT_MS * 10 });
  } finally {
    redis.disconnect();
    await clickhouse.close();
  }
}

const printMaterialized = (done: { column: string; key: string; name: string; added: boolean }[]) => {
  if (done.length === 0) console.log('no property to materialize');
  for (const d of done) console.log(JSON.stringify({ column: d.column, key: d.key, materialized: d.name, added: d.added }));
};

program
  .command('properties:materialize')
  .description("give properties their own column on events, filled for the events already stored (on every shard); the query endpoint reads it within a minute")
  .argument('<keys...>', 'property keys, as events carry them ($browser)')
  .option('--person', "the person's properties as at the event (poe.properties) rather than the event's")
  .action(async (keys: string[], options: { person?: boolean }) => {
    const column = options.person ? 'person_properties' : 'properties';
    printMaterialized(await withPropertiesDeps((deps) => materializeProperties(deps, keys.map((key) => ({ column, key })))));
  });

program
  .command('properties:list')
  .description('the materialized properties, and the most read ones, with how often queries read each (a JSON line each)')
  .option('--limit <n>', 'how many of the most read properties without a column to list', (v) => parsePositive(v), 50)
  .action(async (options: { limit: number }) => {
    const listed = await withPropertiesDeps((deps) => listProperties(deps, options.limit));
    if (listed.length === 0) console.log('no property has been read or materialized yet');
    for (const property of listed) console.log(JSON.stringify(property));
  });

program
  .command('properties:auto')
  .description('materialize the most read properties without a column (MATERIALIZE_TOP_N of them at most, each read MATERIALIZE_MIN_READS times or more); run it from cron')
  .action(async () => {
    printMaterialized(await withPropertiesDeps((deps) => autoMaterialize(deps, { topN: config.materializeTopN, minReads: config.materializeMinReads })));
  });

function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

program
  .command('import')
  .description('load exported events (PostHog NDJSON or CSV, gzipped or not) through /batch/ as a historical migration, in order')
  .argument('<file>', 'NDJSON (event, distinct_id, properties, timestamp, uuid per line) or .csv; gzip is detected')
  .requiredOption('--project <id>', 'the project the events belong to', parsePositive)
  .option('--url <url>', 'where capture is reached (the front door)', config.publicUrl)
  .option('--format <format>', 'ndjson or csv (default: csv for .csv/.csv.gz, else ndjson)')
  .option('--batch-size <n>', 'events per /batch/ request', parsePositive, 1000)
  .option('--resume', 'continue after the last batch the checkpoint file records as sent')
  .option('--checkpoint <path>', 'checkpoint file (default: FILE.import-checkpoint.json)')
  .option('--dry-run', 'read and check every record, send nothing')
  .action(async (file: string, options: { project: number; url: string; format?: string; batchSize: number; resume?: boolean; checkpoint?: string; dryRun?: boolean }) => {
    if (options.format !== undefined && options.format !== 'ndjson' && options.format !== 'csv') throw new InvalidArgumentError('--format must be ndjson or csv');
    const project = await withPool((pool) => new ControlPlaneStore(pool, config.apiKeyPepper).findProject(options.project));
    if (!project) throw new Error(`project ${options.project} does not exist`);
    const result = await runImport({
      file,
      project: project.id,
      apiKey: project.api_token,
      url: options.url,
      ...(options.format ? { format: options.format as 'ndjson' | 'csv' } : {}),
      batchSize: options.batchSize,
      resume: options.resume ?? false,
      dryRun: options.dryRun ?? false,
      ...(options.checkpoint ? { checkpoint: options.checkpoint } : {}),
    });
    const rate = Math.round(result.thisRun / Math.max(result.seconds, 0.001));
    const verb = options.dryRun ? 'valid, ready to send' : 'sent';
    console.log(
      `${result.events} events ${verb}${result.resumedFrom ? ` (resumed after record ${result.resumedFrom})` : ''}; ${result.invalid} invalid records skipped; ` +
        `${result.seconds.toFixed(1)} s, ${rate} events/s; peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`,
    );
    if (result.invalid > 0) process.exitCode = 2;
  });

program
  .command('demo-data')
  .description('send a few weeks of generated product events through capture and make the Product analytics dashboard over them')
  .option('--credentials-file <path>', 'the URL, personal API key and default project (written by make up)', path.resolve('.tributary/credentials.env'))
  .option('--project <id>', 'the project to fill (default: the credentials file\'s)', parsePositive)
  .option('--weeks <n>', 'weeks of history, ending now', parsePositive, 4)
  .option('--users <n>', 'visitors over those weeks', parsePositive, 200)
  .option('--seed <n>', 'the same seed sends the same users and events', parsePositive, 1)
  .action(async (options: { credentialsFile: string; project?: number; weeks: number; users: number; seed: number }) => {
    const credentials = await readCredentials(options.credentialsFile);
    if (!credentials) throw new Error(`no credentials in ${options.credentialsFile}; run make up (or tributary bootstrap) first`);
    const result = await runDemoData({
      url: credentials.TRIBUTARY_URL,
      personalApiKey: credentials.TRIBUTARY_PERSONAL_API_KEY,
      project: options.project ?? Number(credentials.TRIBUTARY_PROJECT_ID),
      weeks: options.weeks,
      users: options.users,
      seed: options.seed,
      onProgress: (message) => process.stderr.write(`${message}\n`),
    });
    const stored = result.sent === 0 ? `${result.events} demo events stored already, none sent` : `${result.events} demo events stored`;
    console.log(`${stored}; the Product analytics dashboard is at ${result.dashboardUrl}`);
  });

program
  .command('backup')
  .description('copy Postgres and ClickHouse into a new folder (Redis and Kafka hold nothing a restore needs)')
  .argument('<dir>', 'a folder that does not exist yet, or is empty')
  .action(async (dir: string) => {
    const { manifest, bytes } = await runBackup(config, path.resolve(dir));
    const files = manifest.clickhouse.tables.reduce((n, t) => n + t.files.length, 0);
    console.log(`backed up Postgres and ${manifest.clickhouse.tables.length} ClickHouse tables (${files} files) to ${path.resolve(dir)}: ${(bytes / 1024 / 1024).toFixed(1)} MiB`);
  });

program
  .command('restore')
  .description('restore a backup into the configured Postgres database and ClickHouse database, which must hold no rows unless --force')
  .argument('<dir>', 'a folder written by tributary backup')
  .option('--force', 'replace the rows the stores already hold')
  .action(async (dir: string, options: { force?: boolean }) => {
    const manifest = await runRestore(config, path.resolve(dir), { force: options.force ?? false });
    console.log(`restored the backup of ${manifest.created_at}; start the services (the worker registers its schedules again)`);
  });

program.parseAsync().catch((error: unknown) => {
  console.error(`tributary: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

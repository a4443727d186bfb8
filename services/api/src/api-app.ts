import express, { type Express } from 'express';
import { DestinationGuard, destinationPolicy } from '@tributary/batch-exports';
import type { ClickHouse } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';
import { jsonBodiesOnly, storableRequest } from '@tributary/http';
import { ControlPlaneStore, FeatureFlagStore, PersonCache } from '@tributary/control-plane';
import { topicNames, type Admin, type RenewingProducer } from '@tributary/kafka';
import type { Pool } from '@tributary/postgres';
import type { Redis } from '@tributary/redis';
import type { Queue } from 'bullmq';
import { AccessControls } from './access-controls/access-controls.js';
import { authenticate, projectAccess } from './auth/authenticate.js';
import { rateLimit } from './auth/rate-limit.js';
import { cohortRoutes } from './cohorts/cohort-routes.js';
import { batchExportRoutes } from './batch-exports/batch-export-routes.js';
import { dashboardRoutes } from './dashboards/dashboard-routes.js';
import { insightRoutes } from './insights/insight-routes.js';
import { eventRoutes } from './events/event-routes.js';
import { explicitMemberRoutes } from './explicit-members/explicit-member-routes.js';
import { ProjectRoles } from './explicit-members/project-roles.js';
import { schemaRoutes } from './operations/schema-routes.js';
import type { StatusDeps } from './operations/status-report.js';
import { statusPageRoutes, statusRoutes } from './operations/status-routes.js';
import { StatusHistory } from './operations/status-history.js';
import { featureFlagRoutes } from './feature-flags/feature-flag-routes.js';
import { earlyAccessFeatureRoutes } from './early-access-features/early-access-feature-routes.js';
import { surveyRoutes } from './surveys/survey-routes.js';
import { OrganizationMemberStore } from './organizations/organization-member-store.js';
import { organizationRoutes } from './organizations/organization-routes.js';
import { CohortStore } from './cohorts/cohort-store.js';
import { PersonActivityLog } from './persons/person-activity.js';
import { PersonCopies } from './persons/person-copies.js';
import { PersonEventPublisher } from './persons/person-event-publisher.js';
import { personRoutes } from './persons/person-routes.js';
import { PersonService } from './persons/person-service.js';
import { ManagementPersonStore } from './persons/management-person-store.js';
import { personalApiKeyRoutes } from './personal-api-keys/personal-api-key-routes.js';
import { projectRoutes } from './projects/project-routes.js';
import { queryRoutes } from './query/query-routes.js';
import { InsightCache } from './query/insight-cache.js';
import { QueryService } from './query/query-service.js';

export interface ApiDeps {
  store: ControlPlaneStore;
  flags: FeatureFlagStore;
  clickhouse: ClickHouse;
  /** The query endpoint runs here, under the limits of `queryLimits`. */
  query: QueryService;
  /** The read-only query user's connection: reads a client's expressions shape (the events list) go here too. */
  queryClickhouse: ClickHouse;
  pool: Pool;
  redis: Redis;
  /** Sends person property changes through ingestion. */
  personEvents: PersonEventPublisher;
  publicUrl: string;
  rateLimitPerMinute: number;
  status: StatusDeps;
  /** Where batch exports may send data: checked before an export is saved. */
  destinationGuard: DestinationGuard;
}

/** The api's dependencies from its connections, the same in the service and in tests. */
export function apiDeps(
  config: Config,
  stores: { pool: Pool; clickhouse: ClickHouse; queryClickhouse: ClickHouse; redis: Redis; producer: RenewingProducer; admin: Admin; deletionQueue: Pick<Queue, 'getJobScheduler'> },
): ApiDeps {
  const topics = topicNames(config.kafkaTopicPrefix);
  return {
    store: new ControlPlaneStore(stores.pool, config.apiKeyPepper),
    flags: new FeatureFlagStore(stores.pool, stores.redis),
    clickhouse: stores.clickhouse,
    query: new QueryService({ clickhouse: stores.queryClickhouse, limits: config, cache: new InsightCache({ redis: stores.redis, clickhouse: stores.clickhouse, clock: () => new Date() }), cohorts: new CohortStore(stores.pool, stores.redis) }),
    queryClickhouse: stores.queryClickhouse,
    pool: stores.pool,
    redis: stores.redis,
    personEvents: new PersonEventPublisher(stores.producer, topics.realtime, config.kafkaProduceTimeoutMs),
    publicUrl: config.publicUrl,
    rateLimitPerMinute: config.apiRateLimitPerMinute,
    destinationGuard: new DestinationGuard(destinationPolicy(config)),
    status: {
      serviceUrls: config.serviceUrls,
      admin: stores.admin,
      groupId: config.ingestConsumerGroup,
      topics,
      clickhouse: stores.clickhouse,
      pool: stores.pool,
      deletionQueue: stores.deletionQueue,
    },
  };
}

/** Mounts every management route; `/api/projects/:project_id/...` and `/api/environments/...` are the same resources. */
export function mountApiRoutes(app: Express, deps: ApiDeps): void {
  // The schema and the status page shell are public; everything else under /api/ takes a key.
  app.use(schemaRoutes(deps.publicUrl), statusPageRoutes());
  // Bodies are read once the key was checked: without one, the answer is a 401 whatever the body, as PostHog's.
  app.use('/api', authenticate(deps.store), rateLimit(deps.redis, deps.rateLimitPerMinute), express.json({ limit: '1mb' }), jsonBodiesOnly(), storableRequest());
  app.use('/api/status', statusRoutes(deps.status, new StatusHistory({ redis: deps.redis, serviceUrls: deps.status.serviceUrls }), deps.store));
  app.use('/api/personal_api_keys', personalApiKeyRoutes());
  app.use('/api/projects', projectRoutes(deps.store));
  app.use('/api/organizations', organizationRoutes(deps));
  const persons = new ManagementPersonStore(deps.pool);
  const activity = new PersonActivityLog(deps.pool);
  const cohorts = new CohortStore(deps.pool, deps.redis);
  const copies = new PersonCopies(deps.clickhouse, new PersonCache(deps.redis));
  const personService = new PersonService({ pool: deps.pool, clickhouse: deps.clickhouse, persons, activity, cohorts, copies, events: deps.personEvents });
  const roles = new ProjectRoles(deps.pool);
  const access = { access: new AccessControls(deps.pool, roles), members: new OrganizationMemberStore(deps.pool) };
  for (const base of ['/api/environments/:project_id', '/api/projects/:project_id']) {
    const project = express.Router({ mergeParams: true });
    project.use(projectAccess(deps.store));
    project.use('/events', eventRoutes({ ...deps, clickhouse: deps.queryClickhouse, cohorts, persons }));
    project.use('/query', queryRoutes(deps.query));
    project.use('/feature_flags', featureFlagRoutes({ ...deps, ...access }));
    project.use('/dashboards', dashboardRoutes({ ...deps, ...access, queries: deps.query }));
    project.use('/insights', insightRoutes({ ...deps, ...access, queries: deps.query }));
    project.use('/batch_exports', batchExportRoutes(deps));
    project.use('/explicit_members', explicitMemberRoutes({ pool: deps.pool, roles }));
    project.use('/cohorts', cohortRoutes({ ...deps, cohorts }));
    project.use('/surveys', surveyRoutes({ ...deps, ...access }));
    project.use('/early_access_features', earlyAccessFeatureRoutes({ ...deps, ...access }));
    project.use('/persons', personRoutes({ persons, activity, service: personService, publicUrl: deps.publicUrl }));
    app.use(base, project);
  }
}

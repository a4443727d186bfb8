import express, { type Express } from 'express';
import { BatchExportStore, DestinationGuard, destinationPolicy } from '@tributary/batch-exports';
import type { ClickHouse } from '@tributary/clickhouse';
import type { Config } from '@tributary/config';
import { jsonBodiesOnly, storableRequest } from '@tributary/http';
import { ControlPlaneStore, FeatureFlagStore, PersonCache } from '@tributary/control-plane';
import { topicNames, type Admin, type RenewingProducer } from '@tributary/kafka';
import type { Pool } from '@tributary/postgres';
import type { PropertyReadCounter, Redis } from '@tributary/redis';
import type { Queue } from 'bullmq';
import { AccessControls } from './access-controls/access-controls.js';
import { actionRoutes } from './actions/action-routes.js';
import { ActionStore } from './actions/action-store.js';
import { authenticate, projectAccess } from './auth/authenticate.js';
import { rateLimit } from './auth/rate-limit.js';
import { cohortRoutes } from './cohorts/cohort-routes.js';
import { cohortCsvUploads } from './cohorts/cohort-csv-upload.js';
import { batchExportRoutes } from './batch-exports/batch-export-routes.js';
import { dashboardRoutes } from './dashboards/dashboard-routes.js';
import { definitionRoutes } from './definitions/definition-routes.js';
import { DefinitionStore } from './definitions/definition-store.js';
import { DashboardStore } from './dashboards/dashboard-store.js';
import { InsightAccess } from './insights/insight-access.js';
import { InsightStore } from './insights/insight-store.js';
import { insightRoutes } from './insights/insight-routes.js';
import { eventRoutes } from './events/event-routes.js';
import { explicitMemberRoutes } from './explicit-members/explicit-member-routes.js';
import { ExplicitMemberStore } from './explicit-members/explicit-member-store.js';
import { ProjectRoles } from './explicit-members/project-roles.js';
import { schemaRoutes } from './operations/schema-routes.js';
import type { StatusDeps } from './operations/status-report.js';
import { statusPageRoutes, statusRoutes } from './operations/status-routes.js';
import { StatusHistory } from './operations/status-history.js';
import { groupRoutes, groupTypeRoutes } from './groups/group-routes.js';
import { GroupStore } from './groups/group-store.js';
import { annotationRoutes } from './annotations/annotation-routes.js';
import { AnnotationStore } from './annotations/annotation-store.js';
import { featureFlagRoutes } from './feature-flags/feature-flag-routes.js';
import { experimentRoutes } from './experiments/experiment-routes.js';
import { ExperimentService } from './experiments/experiment-service.js';
import { ExperimentStore } from './experiments/experiment-store.js';
import { earlyAccessFeatureRoutes } from './early-access-features/early-access-feature-routes.js';
import { EarlyAccessFeatureService } from './early-access-features/early-access-feature-service.js';
import { EarlyAccessFeatureStore } from './early-access-features/early-access-feature-store.js';
import { LinkedFlags } from './feature-flags/linked-flags.js';
import { surveyRoutes } from './surveys/survey-routes.js';
import { SurveyService } from './surveys/survey-service.js';
import { SurveyStore } from './surveys/survey-store.js';
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

/** Everything the routes use, each built once: both base paths mount the same stores. */
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
  dashboardTileConcurrency: number;
  status: StatusDeps;
  /** Where batch exports may send data: checked before an export is saved. */
  destinationGuard: DestinationGuard;
  persons: ManagementPersonStore;
  activity: PersonActivityLog;
  cohorts: CohortStore;
  personService: PersonService;
  roles: ProjectRoles;
  access: AccessControls;
  members: OrganizationMemberStore;
  explicitMembers: ExplicitMemberStore;
  dashboards: DashboardStore;
  insights: InsightStore;
  insightAccess: InsightAccess;
  batchExports: BatchExportStore;
  linkedFlags: LinkedFlags;
  surveys: SurveyStore;
  surveyService: SurveyService;
  features: EarlyAccessFeatureStore;
  featureService: EarlyAccessFeatureService;
  groups: GroupStore;
  annotations: AnnotationStore;
  definitions: DefinitionStore;
  actions: ActionStore;
  experiments: ExperimentStore;
  experimentService: ExperimentService;
}

/** The api's dependencies from its connections, the same in the service and in tests. */
export function apiDeps(
  config: Config,
  stores: { pool: Pool; clickhouse: ClickHouse; queryClickhouse: ClickHouse; redis: Redis; producer: RenewingProducer; admin: Admin; deletionQueue: Pick<Queue, 'getJobScheduler'>; propertyReads?: Pick<PropertyReadCounter, 'record'> },
): ApiDeps {
  const { pool, redis, clickhouse } = stores;
  const topics = topicNames(config.kafkaTopicPrefix);
  const flags = new FeatureFlagStore(pool, redis);
  const personEvents = new PersonEventPublisher(stores.producer, topics.realtime, config.kafkaProduceTimeoutMs);
  const persons = new ManagementPersonStore(pool);
  const activity = new PersonActivityLog(pool);
  const cohorts = new CohortStore(pool, redis);
  const copies = new PersonCopies(clickhouse, new PersonCache(redis));
  const roles = new ProjectRoles(pool);
  const access = new AccessControls(pool, roles);
  const dashboards = new DashboardStore(pool);
  const surveys = new SurveyStore(pool);
  const features = new EarlyAccessFeatureStore(pool);
  const actions = new ActionStore(pool);
  const experiments = new ExperimentStore(pool);
  return {
    store: new ControlPlaneStore(pool, config.apiKeyPepper),
    flags,
    clickhouse,
    query: new QueryService({ clickhouse: stores.queryClickhouse, limits: config, cache: new InsightCache({ redis, clickhouse, clock: () => new Date() }), cohorts, actions, experiments, ...(stores.propertyReads && { propertyReads: stores.propertyReads }) }),
    queryClickhouse: stores.queryClickhouse,
    pool,
    redis,
    personEvents,
    publicUrl: config.publicUrl,
    rateLimitPerMinute: config.apiRateLimitPerMinute,
    dashboardTileConcurrency: config.dashboardTileConcurrency,
    destinationGuard: new DestinationGuard(destinationPolicy(config)),
    status: {
      serviceUrls: config.serviceUrls,
      admin: stores.admin,
      groupId: config.ingestConsumerGroup,
      topics,
      clickhouse,
      pool,
      deletionQueue: stores.deletionQueue,
    },
    persons,
    activity,
    cohorts,
    personService: new PersonService({ pool, clickhouse, persons, activity, cohorts, copies, events: personEvents }),
    roles,
    access,
    members: new OrganizationMemberStore(pool),
    explicitMembers: new ExplicitMemberStore(pool),
    dashboards,
    insights: new InsightStore(pool),
    insightAccess: new InsightAccess({ access, dashboards }),
    batchExports: new BatchExportStore(pool),
    linkedFlags: new LinkedFlags({ access, flags }),
    surveys,
    surveyService: new SurveyService({ surveys, flags }),
    features,
    featureService: new EarlyAccessFeatureService({ features, flags }),
    groups: new GroupStore(pool),
    annotations: new AnnotationStore(pool),
    definitions: new DefinitionStore(pool),
    actions,
    experiments,
    experimentService: new ExperimentService({ experiments, flags }),
  };
}

/** Mounts every management route; `/api/projects/:project_id/...` and `/api/environments/...` are the same resources, served by the same stores. */
export function mountApiRoutes(app: Express, deps: ApiDeps): void {
  // The schema and the status page shell are public; everything else under /api/ takes a key.
  app.use(schemaRoutes(deps.publicUrl), statusPageRoutes());
  // Bodies are read once the key was checked: without one, the answer is a 401 whatever the body, as PostHog's.
  app.use('/api', authenticate(deps.store), rateLimit(deps.redis, deps.rateLimitPerMinute), express.json({ limit: '1mb' }), cohortCsvUploads(), jsonBodiesOnly(), storableRequest());
  app.use('/api/status', statusRoutes(deps.status, new StatusHistory({ redis: deps.redis, serviceUrls: deps.status.serviceUrls }), deps.store));
  app.use('/api/personal_api_keys', personalApiKeyRoutes());
  app.use('/api/projects', projectRoutes(deps.store));
  app.use('/api/organizations', organizationRoutes(deps));
  for (const base of ['/api/environments/:project_id', '/api/projects/:project_id']) {
    const project = express.Router({ mergeParams: true });
    project.use(projectAccess(deps.store));
    project.use('/events', eventRoutes({ ...deps, clickhouse: deps.queryClickhouse }));
    project.use('/query', queryRoutes(deps.query));
    project.use('/feature_flags', featureFlagRoutes(deps));
    project.use('/dashboards', dashboardRoutes({ ...deps, queries: deps.query, tileConcurrency: deps.dashboardTileConcurrency }));
    project.use('/insights', insightRoutes({ ...deps, queries: deps.query }));
    project.use('/batch_exports', batchExportRoutes(deps));
    project.use('/explicit_members', explicitMemberRoutes(deps));
    project.use('/cohorts', cohortRoutes({ ...deps, queries: deps.query }));
    project.use('/actions', actionRoutes(deps));
    project.use('/surveys', surveyRoutes(deps));
    project.use('/early_access_features', earlyAccessFeatureRoutes(deps));
    project.use('/experiments', experimentRoutes(deps));
    project.use('/groups', groupRoutes(deps));
    project.use('/groups_types', groupTypeRoutes(deps));
    project.use('/annotations', annotationRoutes(deps));
    project.use('/persons', personRoutes({ ...deps, service: deps.personService }));
    const definitions = definitionRoutes(deps);
    project.use('/event_definitions', definitions.events);
    project.use('/property_definitions', definitions.properties);
    app.use(base, project);
  }
}

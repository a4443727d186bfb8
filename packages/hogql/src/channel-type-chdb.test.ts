import { channelSuite } from '../test/channel-cases.js';

/** Channel types on a current ClickHouse (chdb's in-process 26.x); `channel-type.integration.test.ts` asks 18.16. */
channelSuite('chdb');

import { channelSuite } from '../test/channel-cases.js';

/** Channel types on the stack's ClickHouse 18.16; `channel-type-chdb.test.ts` asks 26. */
channelSuite('server');

/**
 * The bridge's first import, so it runs before any zod schema is built (the MCP SDK's and the contract's are
 * built when their modules load): zod compiles a fast parser for each object schema the first time it parses
 * one, which pays off in a long-running service and costs a short-lived bridge about 4 ms of its start-up
 * (a CPU profile of one start: generateFastpass and the compile behind it). The bridge parses a handful of
 * answers; it parses them without the compiled path.
 */
import { z } from 'zod';

z.config({ jitless: true });

/**
 * Zod without eval, set before any schema is built: the page's CSP forbids `new Function`, and zod's
 * probe for it (made when the first object schema is built, even though it catches the refusal) is a
 * reported CSP violation. Imported first by lib/delegation.ts, the page's only runtime user of the
 * contract's schemas; ES modules run in import order, so this runs before settings.ts builds them.
 */
import { z } from 'zod';

z.config({ jitless: true });

/**
 * Zod without eval, set before any schema is built: the page's CSP forbids `new Function`, and zod's
 * probe for it (made when the first object schema is built, even though it catches the refusal) is a
 * reported CSP violation. main.ts imports this first; ES modules run in import order, so this runs
 * before the contract's modules build their schemas.
 */
import { z } from 'zod';

z.config({ jitless: true });

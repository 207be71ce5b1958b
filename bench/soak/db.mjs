// The `pg` client, as the PostgreSQL store itself has it: the bench package does not list `pg`
// among its own dependencies, so it is loaded from where @claw/session-store-pg finds it.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.resolve('@claw/session-store-pg/package.json'));

/** @type {typeof import('pg')} */
export const pg = require('pg');

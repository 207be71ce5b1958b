// Imported first by main.tsx, so it runs before any schema is built (schemas read the setting
// when they are created). The console's Content-Security-Policy forbids eval: zod must neither
// probe for it (the probe is reported as a violation) nor compile parsers with it.
import { z } from 'zod';

z.config({ jitless: true });

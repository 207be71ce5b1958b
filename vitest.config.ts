import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Tests import workspace packages from source: the "@claw/source" export condition points each
// package at its src/index.ts, so `pnpm test` needs no build first.
// "module" is dropped: some packages (@opentelemetry/api) point it at builds that Node's own ESM
// loader cannot load, and vitest hands node_modules to Node as they are.
const conditions = [
  '@claw/source',
  ...defaultServerConditions.filter((condition) => condition !== 'module'),
];

// CI asks for a machine-readable summary next to the usual output.
const resultsFile = process.env.CLAW_TEST_RESULTS;

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    // The CLI's end-to-end tests run the built `claw`; this builds it (turbo caches) first.
    globalSetup: ['tools/vitest-global-setup.ts'],
    include: [
      'packages/*/test/**/*.test.ts',
      'apps/*/test/**/*.test.{ts,tsx}',
      'eval/test/**/*.test.ts',
      'tools/test/**/*.test.ts',
    ],
    ...(resultsFile
      ? { reporters: ['default', 'json'], outputFile: { json: resultsFile } }
      : {}),
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});

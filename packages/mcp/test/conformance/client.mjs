// The client that the MCP conformance suite drives (see conformance.test.ts): claw's MCP client as
// an app uses it, `McpServers` from the built @claw/mcp (run with node, so it is the package as
// published: dist/, which the tests' global setup builds). The suite appends its server's URL and
// names the scenario in MCP_CONFORMANCE_SCENARIO; every scenario gets the same client: connect,
// list the tools, call each with arguments made from its schema, close. A request for input
// (elicitation) is accepted with nothing entered, so every field takes its default (SEP-1034).
// In the OAuth scenarios (auth/*) the server is configured as a user would for one that logs in
// with OAuth ("auth": {"type": "oauth", ...}: a client metadata document URL, or the client the
// suite registered beforehand, given in MCP_CONFORMANCE_CONTEXT), and the login is interactive:
// the "browser" is fetch, which follows the authorization server's redirect back to claw's
// listener on 127.0.0.1 as a user's browser would. Tokens go to a file in a temporary folder.
// Exits 1 when the server is not ready or a call fails (and says so in the file named by
// CLAW_CONFORMANCE_CLIENT_RESULT, when set).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { McpServers, parseMcpConfig } from '@claw/mcp';

const url = process.argv[2];
if (url === undefined) {
  console.error('usage: client.mjs <server-url>');
  process.exit(2);
}
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'unknown';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
const oauth = scenario.startsWith('auth/');

/** The suite's client metadata document URL: its authorization server takes it as a client id. */
const clientMetadataUrl = 'https://conformance-test.local/client-metadata.json';

const auth = {
  type: 'oauth',
  clientMetadataUrl,
  ...(context.client_id === undefined ? {} : { clientId: context.client_id }),
  ...(context.client_secret === undefined ? {} : { clientSecret: context.client_secret }),
};
const config = parseMcpConfig(
  JSON.stringify({ mcpServers: { conformance: { url, ...(oauth ? { auth } : {}) } } }),
  { file: 'conformance client', env: {} },
);
const stateFolder = mkdtempSync(path.join(os.tmpdir(), 'claw-conformance-auth-'));
const servers = new McpServers({
  config,
  workDir: process.cwd(),
  onWarning: (warning) => console.error(`warning ${warning.code}: ${warning.message}`),
  elicitation: async (request) => {
    console.log(`elicitation: ${request.message}`);
    return { action: 'accept', content: {} };
  },
  oauth: {
    interactive: true,
    authFile: path.join(stateFolder, 'mcp-auth.json'),
    openUrl: async (page) => {
      console.log(`login page: ${page.origin}${page.pathname}`);
      const response = await fetch(page);
      await response.body?.cancel();
    },
  },
});

/** A value for a property: its default, its first enum value, or a plain one of its type. */
function sample(schema) {
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'string':
      return 'claw';
    case 'array':
      return [];
    case 'object':
      return argumentsFor(schema);
    default:
      return null;
  }
}

/** The required arguments of a tool, each with a sample value. */
function argumentsFor(schema) {
  const args = {};
  for (const name of schema.required ?? []) args[name] = sample(schema.properties?.[name] ?? {});
  return args;
}

let failed = false;
try {
  await servers.ready();
  const [status] = servers.status();
  if (status?.state !== 'ready') {
    console.error(`${scenario}: the server is ${status?.state}: ${status?.lastError ?? ''}`);
    failed = true;
  } else {
    console.log(`${scenario}: ready, tools: ${status.tools.join(', ') || '(none)'}`);
    for (const tool of servers.list()) {
      const { name, parameters } = tool.definition;
      const controller = new AbortController();
      try {
        const result = await tool.execute(argumentsFor(parameters), {
          signal: controller.signal,
          workDir: process.cwd(),
        });
        const text = typeof result === 'string' ? result : JSON.stringify(result);
        console.log(`${name}: ${text}`);
      } catch (error) {
        console.error(`${name} failed: ${error instanceof Error ? error.message : String(error)}`);
        failed = true;
      }
    }
  }
} finally {
  await servers.close();
  rmSync(stateFolder, { recursive: true, force: true });
}
// For conformance.test.ts, which judges the scenario with it (the suite only says whether the
// client exited 0 together with the checks).
const resultFile = process.env.CLAW_CONFORMANCE_CLIENT_RESULT;
if (resultFile !== undefined) writeFileSync(resultFile, JSON.stringify({ scenario, failed }));
process.exit(failed ? 1 : 0);

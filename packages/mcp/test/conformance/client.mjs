// The client that the MCP conformance suite drives (see conformance.test.ts): claw's MCP client as
// an app uses it, `McpServers` from the built @claw/mcp (run with node, so it is the package as
// published: dist/, which the tests' global setup builds). The suite appends its server's URL and
// names the scenario in MCP_CONFORMANCE_SCENARIO; every scenario gets the same client: connect,
// list the tools, call each with arguments made from its schema, close. A request for input
// (elicitation) is accepted with nothing entered, so every field takes its default (SEP-1034).
// Exits 1 when the server is not ready or a call fails (and says so in the file named by
// CLAW_CONFORMANCE_CLIENT_RESULT, when set).
import { writeFileSync } from 'node:fs';
import { McpServers, parseMcpConfig } from '@claw/mcp';

const url = process.argv[2];
if (url === undefined) {
  console.error('usage: client.mjs <server-url>');
  process.exit(2);
}
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'unknown';

const config = parseMcpConfig(JSON.stringify({ mcpServers: { conformance: { url } } }), {
  file: 'conformance client',
  env: {},
});
const servers = new McpServers({
  config,
  workDir: process.cwd(),
  onWarning: (warning) => console.error(`warning ${warning.code}: ${warning.message}`),
  elicitation: async (request) => {
    console.log(`elicitation: ${request.message}`);
    return { action: 'accept', content: {} };
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
}
// For conformance.test.ts, which judges the scenario with it (the suite only says whether the
// client exited 0 together with the checks).
const resultFile = process.env.CLAW_CONFORMANCE_CLIENT_RESULT;
if (resultFile !== undefined) writeFileSync(resultFile, JSON.stringify({ scenario, failed }));
process.exit(failed ? 1 : 0);

// One task with the engine, the OpenAI-compatible provider and a tool of your own.
// Run: OPENAI_API_KEY=sk-… node dist/engine-tool.js (OPENAI_BASE_URL, OPENAI_MODEL optional)
import { Gate, MemoryGrantStore, staticHandler } from '@claw/approval';
import { defineTool } from '@claw/core';
import { Engine } from '@claw/engine';
import { OpenAIProvider } from '@claw/provider';
import { MemorySession } from '@claw/session-store';
import { z } from 'zod';

// Schema first: the model sees its JSON Schema, and its arguments are checked before it runs.
const weather = defineTool({
  name: 'get_weather',
  description: 'The weather in a city now.',
  risk: 'safe', // the default policy runs safe tools without asking
  readOnly: true,
  schema: z.object({ city: z.string().describe('the city, e.g. "Lisbon"') }),
  execute: async ({ city }) => `${city}: sunny, 21 °C`,
});

const engine = new Engine({
  provider: new OpenAIProvider({
    apiKey: process.env.OPENAI_API_KEY ?? '',
    model: process.env.OPENAI_MODEL ?? 'gpt-4.1-mini',
    ...(process.env.OPENAI_BASE_URL ? { baseURL: process.env.OPENAI_BASE_URL } : {}),
  }),
  tools: [weather],
  // Every tool call passes the gate; nobody is here to ask, so what needs asking is denied.
  gate: new Gate({ handler: staticHandler('deny'), grants: new MemoryGrantStore() }),
});

const result = await engine.run('What is the weather in Lisbon?', {
  session: new MemorySession({ workDir: process.cwd() }),
  reporter: {
    onToolCall: (call) => console.log(`> ${call.name} ${call.arguments}`),
    onTextDelta: (text) => {
      process.stdout.write(text);
    },
  },
});
console.log(`\n${result.status}: ${result.turns} model calls, ${result.usage.totalTokens} tokens`);

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file in the workspace.',
  risk: 'safe',
  schema: z.object({
    path: z.string().min(1).describe('path relative to the workspace'),
    offset: z.number().int().nonnegative().optional(),
  }),
  async execute(args, context) {
    return `${context.workDir}/${args.path}@${args.offset ?? 0}`;
  },
});

describe('defineTool (CORE-2)', () => {
  it('derives the JSON Schema the model sees from the zod schema', () => {
    expect(readFile.definition).toEqual({
      name: 'read_file',
      description: 'Read a file in the workspace.',
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', minLength: 1, description: 'path relative to the workspace' },
          offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
        },
        required: ['path'],
      },
    });
    expect(readFile.risk).toBe('safe');
    expect(readFile.readOnly).toBeUndefined();
  });

  it('marks a tool that only reads as readOnly when asked', () => {
    const look = defineTool({
      name: 'look',
      description: 'Reads.',
      risk: 'safe',
      readOnly: true,
      schema: z.object({}),
      execute: async () => 'seen',
    });
    expect(look.readOnly).toBe(true);
  });

  it('validates arguments with a readable error', () => {
    expect(readFile.parseArguments?.({ path: 'a.ts' })).toEqual({ success: true, data: { path: 'a.ts' } });
    const bad = readFile.parseArguments?.({ path: 3 });
    expect(bad?.success).toBe(false);
    expect(bad?.success === false ? bad.error : '').toMatch(/path/);
  });

  it('executes with the context', async () => {
    const result = await readFile.execute({ path: 'a.ts', offset: 2 }, { signal: new AbortController().signal, workDir: '/ws' });
    expect(result).toBe('/ws/a.ts@2');
  });

  it('refuses names the Chat Completions API would reject', () => {
    expect(() =>
      defineTool({ name: 'read file', description: '', risk: 'safe', schema: z.object({}), execute: async () => '' }),
    ).toThrow(/invalid tool name "read file"/);
  });
});

import { describe, expect, it } from 'vitest';
import { A2aConfigError, parseA2aConfig } from '../src/index.js';

const file = 'a2a.json';
const parse = (value: unknown, env: Record<string, string> = {}) =>
  parseA2aConfig(typeof value === 'string' ? value : JSON.stringify(value), { file, env });

describe('parseA2aConfig', () => {
  it('reads peers with their url, expanded headers and protocol', () => {
    const config = parse({
      peers: {
        reviewer: { url: 'https://agents.example.com/reviewer', headers: { Authorization: 'Bearer ${TOKEN}' } },
        twin: { url: 'http://127.0.0.1:8081', protocol: 'claw', description: 'another claw' },
      },
    }, { TOKEN: 'abc' });
    expect(config).toEqual({
      file,
      peers: [
        {
          name: 'reviewer',
          url: 'https://agents.example.com/reviewer',
          headers: { Authorization: 'Bearer abc' },
          protocol: 'a2a',
          description: undefined,
        },
        { name: 'twin', url: 'http://127.0.0.1:8081', headers: {}, protocol: 'claw', description: 'another claw' },
      ],
    });
  });

  it('names a missing or empty variable and the peer', () => {
    const config = { peers: { reviewer: { url: 'https://a.example', headers: { 'X-Key': '${KEY}' } } } };
    expect(() => parse(config)).toThrow(
      'a2a.json: A2A peer "reviewer": headers.X-Key uses ${KEY}, but the environment variable KEY is not set',
    );
    expect(() => parse(config, { KEY: '' })).toThrow('the environment variable KEY is empty');
    const bad = { peers: { reviewer: { url: 'https://a.example', headers: { 'X-Key': '${not a name}' } } } };
    expect(() => parse(bad)).toThrow('which is not a variable name');
  });

  it('refuses what is not JSON, unknown keys, and a url that is not http(s)', () => {
    expect(() => parse('{')).toThrow(A2aConfigError);
    expect(() => parse('{')).toThrow('a2a.json is not valid JSON');
    expect(() => parse({ peers: { x: { url: 'https://a.example', token: 'no' } } })).toThrow(
      'a2a.json is not a valid A2A configuration',
    );
    expect(() => parse({ peers: { x: { url: 'ftp://a.example' } } })).toThrow(
      'a2a.json: A2A peer "x": "url" must be an http:// or https:// address, got "ftp://a.example"',
    );
    const error = (() => {
      try {
        parse({ agents: {} });
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toMatchObject({ code: 'a2a_config_invalid', userError: true });
  });
});

import type { AgentCard, AgentSkill } from '@a2a-js/sdk';

export interface ClawAgentCardOptions {
  name: string;
  description: string;
  version: string;
  /** The JSON-RPC endpoint (absolute URL). */
  url: string;
  skills?: readonly AgentSkill[];
  /** Whether `SendStreamingMessage` is served. Default true. */
  streaming?: boolean;
}

/** The name of the bearer security scheme on claw's card. */
export const bearerSchemeName = 'bearer';

/**
 * claw's agent card (A2A-2): name, description, skills, the JSON-RPC interface (A2A 1.0) and
 * the bearer security scheme every method needs. Nothing else: the card is public.
 */
export function clawAgentCard(options: ClawAgentCardOptions): AgentCard {
  return {
    name: options.name,
    description: options.description,
    version: options.version,
    supportedInterfaces: [
      { url: options.url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    capabilities: {
      streaming: options.streaming ?? true,
      pushNotifications: false,
      extensions: [],
      extendedAgentCard: false,
    },
    securitySchemes: {
      [bearerSchemeName]: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: {
            description:
              'The claw-server token: the one given with --token-file or CLAW_SERVER_TOKEN, ' +
              'or the generated one, in the file that token_file in .claw/server.json names',
            scheme: 'Bearer',
            bearerFormat: '',
          },
        },
      },
    },
    securityRequirements: [{ schemes: { [bearerSchemeName]: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [...(options.skills ?? [defaultSkill])],
    signatures: [],
  };
}

const defaultSkill: AgentSkill = {
  id: 'coding-task',
  name: 'Coding task',
  description:
    'Works on a task in the server\'s workspace with claw\'s tools (read, write and edit files, ' +
    'run commands) and reports the result. Tools that need permission are asked about in the ' +
    'claw console and denied when nobody allows them.',
  tags: ['coding', 'workspace'],
  examples: ['Add a unit test for the parser and run the tests'],
  inputModes: ['text/plain'],
  outputModes: ['text/plain'],
  securityRequirements: [],
};

/** The card as sent on the wire (the v1.0 JSON form). */
export async function agentCardJson(card: AgentCard): Promise<unknown> {
  const { AgentCard: AgentCardCodec } = await import('@a2a-js/sdk');
  return AgentCardCodec.toJSON(card);
}

import packageJson from '../package.json' with { type: 'json' };

/** The version of the `claw` app (from its package.json). */
export const version: string = packageJson.version;

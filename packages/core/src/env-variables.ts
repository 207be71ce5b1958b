/** What is wrong with one `${VAR}` in a configuration value. */
export interface EnvVariableProblem {
  /** `invalid_name`: not a variable name; `not_set` / `empty`: the environment lacks a value. */
  kind: 'invalid_name' | 'not_set' | 'empty';
  /** The key of the value that holds it (a header or environment variable name). */
  key: string;
  /** What stood between `${` and `}`. */
  variable: string;
}

const variablePattern = /\$\{([^}]*)\}/g;
const variableName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replaces every `${VAR}` in the values by `lookup(VAR)`: the one rule of every claw
 * configuration file that takes secrets from the environment (`mcp.json`, `a2a.json`). A name
 * that is not a variable name, or a variable that is missing or empty, is never sent on as it
 * is: `fail` is called with what is wrong and must throw (each file says it in its own words).
 */
export function expandEnvVariables(
  values: Readonly<Record<string, string>>,
  lookup: (variable: string) => string | undefined,
  fail: (problem: EnvVariableProblem) => never,
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    result[key] = value.replace(variablePattern, (_match, variable: string) => {
      if (!variableName.test(variable)) fail({ kind: 'invalid_name', key, variable });
      const found = lookup(variable);
      if (found === undefined) fail({ kind: 'not_set', key, variable });
      if (found === '') fail({ kind: 'empty', key, variable });
      return found;
    });
  }
  return result;
}

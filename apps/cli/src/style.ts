/** Colours for terminal text; all identity functions when colour is off (CLI-4). */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

/** Colour only on a terminal, and never when `NO_COLOR` is set (to anything but ''). */
export function colourWanted(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  const noColor = env.NO_COLOR;
  return stream.isTTY === true && (noColor === undefined || noColor === '');
}

export function createStyle(enabled: boolean): Style {
  const paint = (open: number, close: number) => (text: string) =>
    enabled ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    enabled,
    bold: paint(1, 22),
    dim: paint(2, 22),
    red: paint(31, 39),
    green: paint(32, 39),
    yellow: paint(33, 39),
    cyan: paint(36, 39),
  };
}

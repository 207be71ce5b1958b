/**
 * Cuts `text` into pieces of `min` to `max` characters with a seeded generator, so that a test
 * exercises many split points and still fails the same way every run.
 */
export function splitIntoPieces(
  text: string,
  options: { min: number; max: number; seed: number },
): string[] {
  const { min, max } = options;
  if (min < 1 || max < min) throw new RangeError(`invalid piece size range ${min}..${max}`);
  let state = options.seed >>> 0 || 1;
  const random = (): number => {
    // xorshift32: small, deterministic, good enough for picking split points.
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
  const pieces: string[] = [];
  let position = 0;
  while (position < text.length) {
    const size = min + Math.floor(random() * (max - min + 1));
    pieces.push(text.slice(position, position + size));
    position += size;
  }
  return pieces;
}

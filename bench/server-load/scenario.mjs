// The tasks of the throughput phases, shared by the fake model (model.mjs), which answers by the
// prompt's first word, and by main.mjs, which tells each contender the answer its sessions must
// end with. Plain JavaScript, no imports.

/** What the model answers last, after the read_file turns, in a `load:` task. */
export const finalAnswer = 'All files read.';

/** The prompts: `load:` (phase 1; latency BENCH_MODEL_LATENCY_MS) and `latency:` (phase 1b). */
export const prompts = {
  load: 'load: read the four files, ten times',
  latency: 'latency: read the four files, ten times',
};

/**
 * The text chunks of one `latency:` answer, `count` of them: a model that says a few words before
 * its tool calls, and whose last answer ends with {@link finalAnswer}.
 */
export function latencyChunks(count, last) {
  return Array.from({ length: count }, (_, index) =>
    index < count - 1 ? `part ${index + 1}, ` : last ? finalAnswer : 'reading the files.');
}

/** The answer a session of a task must end with (`chunks`: a `latency:` answer's chunks). */
export function answerOf(prompt, chunks) {
  return prompt === prompts.latency ? latencyChunks(chunks, true).join('') : finalAnswer;
}

// The fake model of the server-load benchmark, in a process of its own (started by main.mjs with
// an IPC channel): the FakeOpenAIServer of @claw/testing on 127.0.0.1, an OS-chosen port. Its
// CPU time must not land on either contender (claw-server, or the bare loop's process) nor on
// the benchmark's clients, which time what they receive.
//
// What it answers depends on the task's prompt (its first user message), so one model serves
// every phase and keeps no state between requests (the turn comes from the ids of the last tool
// calls in the request):
//   `load: …`   `turns` turns of `callsPerTurn` parallel read_file calls, then a short answer,
//               each answer after `loadLatencyMs` (default 0);
//   `latency: …` the same turns, but each answer streams `latencyChunks` text chunks first (the
//               last answer's make up its text), the first `latencyMs` after the request, the
//               rest `latencyChunkDelayMs` apart (and so the tool calls after them);
//   `stream: …` the same, but each turn first streams `streamChunks` text chunks, one every
//               `streamChunkDelayMs`, each stamped with the time it is sent (see `stamped`);
//   `long: …`   one long answer, a chunk every millisecond: `longChunks` chunks of
//               `longChunkChars` characters (enough to fill a stopped client's socket buffers
//               and the server's queue for it within seconds), then `trickleChunks` of
//               `trickleChunkChars`, after which the model says nothing more and keeps the
//               response open (the answer is still streaming when the benchmark ends the server);
//   `flood: …`  the same with `floodChunks` chunks of `floodChunkChars` and no trickle.
//
// IPC: it sends {type: 'ready', baseURL} once listening; it answers {type: 'count'} with
// {type: 'count', requests} (requests since the last count) and exits on {type: 'exit'}.
import { FakeOpenAIServer } from '@claw/testing/node';
import { finalAnswer, latencyChunks as latencyText } from './scenario.mjs';

const config = JSON.parse(process.argv[2] ?? '{}');
const {
  turns = 10,
  callsPerTurn = 4,
  loadLatencyMs = 0,
  latencyMs = 100,
  latencyChunks = 20,
  latencyChunkDelayMs = 1,
  streamChunks = 20,
  streamChunkDelayMs = 50,
  longChunks = 3000,
  longChunkChars = 4096,
  trickleChunks = 10_000,
  trickleChunkChars = 64,
  floodChunks = 10_000,
  floodChunkChars = 4096,
} = config;

const now = () => performance.timeOrigin + performance.now();

/**
 * A text chunk that says when it was sent: `@<epoch ms, 3 decimals>;` and filler up to a token's
 * few characters. The FakeOpenAIServer encodes each chunk (JSON.stringify) right before writing it
 * (after its chunk delay), so a piece whose `toJSON` reads the clock is stamped at send time.
 * `performance.timeOrigin + performance.now()` agrees between processes of one machine to tens
 * of microseconds (the benchmark's clients read the same clock when an event arrives).
 */
const stamped = () => ({ toJSON: () => `@${now().toFixed(3)}; lorem ipsum` });
const longPiece = 'x'.repeat(longChunkChars);
const tricklePiece = 'y'.repeat(trickleChunkChars);
const floodPiece = 'z'.repeat(floodChunkChars);
const longAnswers = new Map([
  [
    'long',
    [
      ...Array.from({ length: longChunks }, () => longPiece),
      ...Array.from({ length: trickleChunks }, () => tricklePiece),
    ],
  ],
  ['flood', Array.from({ length: floodChunks }, () => floodPiece)],
]);

const turnOf = (body) => {
  const last = body.messages.findLast((message) => message.role === 'assistant');
  const id = last?.tool_calls?.[0]?.id;
  return id === undefined ? 0 : Number(id.split('_')[1]) + 1;
};
const scenarioOf = (body) => {
  const first = body.messages.find((message) => message.role === 'user');
  return typeof first?.content === 'string' ? first.content.split(':')[0] : '';
};
const readFiles = (turn) =>
  Array.from({ length: callsPerTurn }, (_, index) => ({
    id: `call_${turn}_${index}`,
    name: 'read_file',
    arguments: JSON.stringify({ path: `file-${index}.txt` }),
  }));

let requests = 0;
const server = await FakeOpenAIServer.start({
  onRequest: () => {
    requests += 1;
  },
  turns: (body) => {
    // Its record of requests is not needed; it would only grow.
    server.requests.length = 0;
    const scenario = scenarioOf(body);
    const longAnswer = longAnswers.get(scenario);
    if (longAnswer !== undefined) {
      return {
        textChunks: longAnswer,
        chunkDelayMs: 1,
        // After the last chunk (the first is the role's) the model goes quiet, the answer open.
        fault: { type: 'hang', afterChunks: longAnswer.length + 1 },
        usage: { promptTokens: 100, completionTokens: 10 },
      };
    }
    const turn = turnOf(body);
    const last = turn >= turns;
    let text;
    if (scenario === 'stream') {
      text = {
        textChunks: Array.from({ length: streamChunks }, stamped),
        chunkDelayMs: streamChunkDelayMs,
      };
    } else if (scenario === 'latency') {
      // The first token `latencyMs` after the request (the headers go at once, as a model's
      // server sends them), then the chunks one write each.
      text = {
        firstChunkDelayMs: latencyMs,
        textChunks: latencyText(latencyChunks, last),
        chunkDelayMs: latencyChunkDelayMs,
      };
    } else {
      // `load:` answers wait `loadLatencyMs` first (BENCH_MODEL_LATENCY_MS), as a real model would.
      text = {
        ...(last ? { text: finalAnswer } : {}),
        ...(scenario === 'load' && loadLatencyMs > 0 ? { delayMs: loadLatencyMs } : {}),
      };
    }
    if (last) return { ...text, usage: { promptTokens: 1000, completionTokens: 5 } };
    const usage = { promptTokens: 1000, completionTokens: 40 };
    return { ...text, toolCalls: readFiles(turn), usage };
  },
});

process.on('message', (message) => {
  if (message?.type === 'count') {
    process.send({ type: 'count', requests });
    requests = 0;
  } else if (message?.type === 'exit') {
    void server.close().finally(() => process.exit(0));
  }
});
process.on('disconnect', () => void server.close().finally(() => process.exit(0)));
process.send({ type: 'ready', baseURL: server.baseURL });

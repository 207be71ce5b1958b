// The fake model of the soak, in a process of its own (started by soak.mjs with an IPC channel):
// the FakeOpenAIServer of @claw/testing on 127.0.0.1, an OS-chosen port. It keeps no state
// between requests, so any instance may send any request of any task (after a takeover too):
// what it answers follows from the request alone.
//
// A task's prompt carries its tag: `[soak <tag>] …` (a tag is unique in the whole run: client,
// task number and attempt). The model counts its own replies since that prompt (the step) and
// answers, step by step:
//   0  read_file file-<n>.txt and a bash call that appends one line to markers/<call id>;
//   1  write_file out/<tag>.txt and a marked bash call that then sleeps a little (a kill or a
//      freeze in the middle of a tool lands there often);
//   2… a marked bash call, up to `steps` - 1;
//   then a short text answer, which ends the task.
// Every call id is `<tag>-s<step>-<index>`: unique in the run, so a marker file with more than one
// line means that a tool ran twice.
//
// argv: JSON {steps, latencyMs, sleepSeconds}. IPC: it sends {type: 'ready', baseURL} once
// listening, answers {type: 'count'} with {type: 'count', requests} (all so far), and exits on
// {type: 'exit'} or when its parent goes away.
import { FakeOpenAIServer } from '@claw/testing/node';

const { steps = 3, latencyMs = 20, sleepSeconds = 0.3 } = JSON.parse(process.argv[2] ?? '{}');

const tagPattern = /^\[soak ([A-Za-z0-9_-]+)\]/;

/**
 * The marked bash command of call `id`: one line in markers/<id> each time it runs. `&&`: a line
 * that could not be written (a full disk) fails the command, so that "exit code 0" means the line
 * is there (with `;` the sleep's status hid it).
 */
const markerCommand = (id, sleep = 0) =>
  `echo ran >> markers/${id}${sleep > 0 ? ` && sleep ${sleep}` : ''}`;

function turnFor(body) {
  const messages = body?.messages ?? [];
  const promptIndex = messages.findLastIndex((message) => message.role === 'user');
  const prompt = messages[promptIndex];
  const tag = typeof prompt?.content === 'string' ? tagPattern.exec(prompt.content)?.[1] : undefined;
  if (tag === undefined) return { text: 'not a soak task', usage: { promptTokens: 100, completionTokens: 3 } };
  const step = messages.slice(promptIndex + 1).filter((message) => message.role === 'assistant').length;
  const usage = { promptTokens: 200, completionTokens: 20 };
  const delay = latencyMs > 0 ? { delayMs: latencyMs } : {};
  const id = (index) => `${tag}-s${step}-${index}`;
  const bash = (index, sleep = 0) => ({
    id: id(index),
    name: 'bash',
    arguments: JSON.stringify({ command: markerCommand(id(index), sleep) }),
  });
  if (step >= steps) return { text: `done ${tag}`, usage, ...delay };
  if (step === 0) {
    const file = `file-${tag.length % 4}.txt`;
    return {
      toolCalls: [{ id: id(0), name: 'read_file', arguments: JSON.stringify({ path: file }) }, bash(1)],
      usage,
      ...delay,
    };
  }
  if (step === 1) {
    return {
      toolCalls: [
        {
          id: id(0),
          name: 'write_file',
          arguments: JSON.stringify({ path: `out/${tag}.txt`, content: `written by ${tag}\n` }),
        },
        bash(1, sleepSeconds),
      ],
      usage,
      ...delay,
    };
  }
  return { toolCalls: [bash(0)], usage, ...delay };
}

let requests = 0;
const server = await FakeOpenAIServer.start({
  onRequest: () => {
    requests += 1;
  },
  turns: (body) => {
    // Its record of requests is not needed; it would only grow.
    server.requests.length = 0;
    return turnFor(body);
  },
});

const exit = () => void server.close().finally(() => process.exit(0));
process.on('message', (message) => {
  if (message?.type === 'count') process.send({ type: 'count', requests });
  else if (message?.type === 'exit') exit();
});
process.on('disconnect', exit);
process.send({ type: 'ready', baseURL: server.baseURL });

// Approvals asked in your own UI: here a terminal question through readline; a web page, a chat
// bot or a callback fits the same `ApprovalHandler`.
// Run in a project: node dist/approval-prompt.js [workspace folder]
import type { ApprovalHandler } from '@claw/approval';
import { RuntimeFactory, resolveSettings } from '@claw/runtime';
import { createInterface } from 'node:readline/promises';

const terminal = createInterface({ input: process.stdin, output: process.stdout });

const askInTerminal: ApprovalHandler = {
  // Called for each call the policy asks about; `signal` aborts when the task is canceled.
  async approve(prompt, signal) {
    console.log(`\n${prompt.toolName} (${prompt.risk}): ${prompt.reason}`);
    const answer = await terminal.question('Allow? [y]es once, [s]ession, [N]o: ', { signal });
    if (answer.trim() === 'y') return 'allow_once';
    if (answer.trim() === 's') return 'allow_session'; // the same call is not asked again
    return { decision: 'deny', reason: 'the user said no in the terminal' };
  },
};

const workDir = process.argv[2] ?? process.cwd();
// Without a flag or config saying otherwise, claw asks only on a terminal: ask here too.
const settings = await resolveSettings({ workDir, env: process.env, defaultApproval: 'ask' });
const factory = new RuntimeFactory({ settings, env: process.env });
const runtime = await factory.createRuntime({ workDir, approvalHandler: askInTerminal });
try {
  const task = runtime.start('Write NOTES.md with a one-line summary of README.md.');
  const result = await task.wait();
  console.log(`${result.status}: ${result.finalText}`);
} finally {
  terminal.close();
  await runtime.close();
  await factory.close();
}

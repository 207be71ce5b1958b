// The same through RuntimeFactory, as the claw apps build it: settings from the environment
// (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL) and .claw/config.json, the built-in tools, and
// sessions kept in files under <workspace>/.claw/sessions/ that a later run resumes.
// Run in a project: node dist/runtime-resume.js [workspace folder]
import { RuntimeFactory, resolveSettings } from '@claw/runtime';

const workDir = process.argv[2] ?? process.cwd();
const sessionId = 'example-resume';

/** One task on the session, as one process would run it: open, run, store, close. */
async function ask(prompt: string): Promise<void> {
  const settings = await resolveSettings({ workDir, env: process.env });
  const factory = new RuntimeFactory({ settings, env: process.env });
  const runtime = await factory.createRuntime({ workDir, sessionId });
  try {
    console.log(`session ${sessionId}: ${runtime.session.history().length} messages before`);
    const result = await runtime.start(prompt).wait();
    console.log(`${result.status}: ${result.finalText}`);
  } finally {
    await runtime.close();
    await factory.close();
  }
}

await ask('Read README.md and say in one line what this project is.');
// The next run (here, or in another process) reads the session back from its file.
await ask('How do I run it?');

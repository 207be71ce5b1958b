// The collector lives in @claw/core, so that other tool packages (MCP) cap output the same way.
export { CappedOutput } from '@claw/core';

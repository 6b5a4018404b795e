import t from 'tap';
import { unprivilegedAccount } from '../helpers/fresh-clone.js';
import { runReadmeCommands } from '../helpers/readme-commands.js';

// `npm ci && npx helpdesk serve` in a fresh private (0700) directory, twice and side by side:
// as the user running the tests (root on CI machines and in containers, where the embedded
// PostgreSQL must run as the `postgres` user from a place that user can reach), and as an
// ordinary user (switched to with setpriv when the tests run as root), whose cluster lives in the
// data dir as it always did.
t.setTimeout(15 * 60_000);
t.jobs = 2;

const asRoot = process.getuid?.() === 0;
const account = unprivilegedAccount();

t.test(`the README's commands in a private directory, as ${asRoot ? 'root' : 'the current user'}`, { buffered: true }, async (t) => {
  await runReadmeCommands(t);
});

t.test("the README's commands in a private directory, as an unprivileged user", { buffered: true, skip: typeof account === 'string' ? account : false }, async (t) => {
  if (typeof account !== 'string') await runReadmeCommands(t, account);
});

import { Command, Errors, Flags } from '@oclif/core';
import { AppError, exitCodeFor, isAppError } from '../core/errors.js';

/**
 * The base of every `helpdesk` command (CONTRACT §9): `--json` prints the typed result of `run()`
 * as one JSON document on stdout and nothing else; text mode renders it with `this.log`, which
 * oclif silences under `--json`. Failures leave uniformly: `{"error": {code, message, details?}}`
 * on stdout with --json, else `Error (code): message` on stderr, and the exit code of the error's
 * class (exitCodeFor, documented in README).
 */
export abstract class BaseCommand extends Command {
  static override enableJsonFlag = true;

  protected override logJson(json: unknown): void {
    // Plain JSON, never colourised: the output is for machines.
    process.stdout.write(JSON.stringify(json, null, 2) + '\n');
  }

  protected override async catch(err: Error & { exitCode?: number }): Promise<void> {
    if (err instanceof Errors.ExitError) throw err;
    const error = normalise(err);
    process.exitCode = exitCodeFor(error);
    if (this.jsonEnabled()) {
      this.logJson({ error: { code: error.code, message: error.message, ...(error.details !== undefined ? { details: error.details } : {}) } });
    } else {
      process.stderr.write(`Error (${error.code}): ${error.message}\n`);
    }
  }
}

/** Flag parsing problems are the caller's input errors; anything unexpected is internal_error. */
function normalise(err: Error): AppError {
  if (isAppError(err)) return err;
  if (err instanceof Errors.CLIError && 'parse' in err) return parseProblems(err.message);
  return new AppError('internal_error', err.message || 'An internal error occurred');
}

/**
 * oclif reports flag problems as one text ("The following errors occurred:\n  Missing required
 * flag slug\n  …\nSee more help with --help"); this makes it one detail per problem, naming the
 * flag where the line does.
 */
function parseProblems(text: string): AppError {
  const lines: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/\s{2,}/g, ': ');
    if (!line || line === 'The following errors occurred:' || line.startsWith('See more help with')) continue;
    // "Missing 1 required arg:" is followed by the argument's own line.
    if (lines.length && lines[lines.length - 1]!.endsWith(':')) lines[lines.length - 1] += ` ${line}`;
    else lines.push(line);
  }
  const problems = (lines.length ? lines : [text]).map((line) => ({
    field: /--([\w-]+)/.exec(line)?.[1] ?? /(?:flag|arg):? ([\w-]+)/.exec(line)?.[1] ?? '(arguments)',
    message: line,
  }));
  return new AppError('validation_failed', problems.map((p) => p.message).join('; '), problems);
}

/** `--api-url` / `--token`: the commands that can work through the REST API spread these in. */
export const remoteFlags = {
  'api-url': Flags.string({ description: 'Work through the REST API at this URL instead of the local database', env: 'HELPDESK_API_URL' }),
  token: Flags.string({ description: 'Bearer token (session or API key) for --api-url', env: 'HELPDESK_TOKEN' }),
};

import { Box, Text, render, type Instance } from 'ink';
import { bar, duration, type ProgressModel } from '../../legacy-import/progress.js';

/**
 * The live view of `helpdesk import legacy` on a terminal: one bar per entity with its rows done
 * and total, then the rate, the elapsed time and the time left. ink redraws it in place; the
 * command prints its summary below it once the import ends. What it shows is computed in
 * src/legacy-import/progress.ts.
 */
export function ImportProgress({ model }: { model: ProgressModel }) {
  const label = Math.max(...model.bars.map((b) => b.label.length)) + 2;
  return (
    <Box flexDirection="column">
      {model.bars.map((b) => (
        <Box key={b.key}>
          <Box width={label} flexShrink={0}>
            <Text bold={b.fraction > 0 && b.fraction < 1}>{b.label}</Text>
          </Box>
          <Text color={b.fraction >= 1 ? 'green' : undefined}>{bar(b.fraction)}</Text>
          <Text> {`${b.done}/${b.total}`}</Text>
        </Box>
      ))}
      <Text>
        {`${model.rate.toFixed(0)} rows/s  elapsed ${duration(model.elapsedSeconds)}  ETA ${duration(model.etaSeconds)}  ${model.errors} errors`}
      </Text>
    </Box>
  );
}

export interface ProgressView {
  update(model: ProgressModel): void;
  /** Draws the last state and leaves it on the screen. */
  stop(): Promise<void>;
}

export function startProgressView(stream: NodeJS.WriteStream): ProgressView {
  let app: Instance | null = null;
  return {
    update(model) {
      if (app) app.rerender(<ImportProgress model={model} />);
      else app = render(<ImportProgress model={model} />, { stdout: stream, patchConsole: false, exitOnCtrlC: false });
    },
    async stop() {
      if (!app) return;
      // Ask for the exit promise before unmounting: ink settles it on unmount only if it exists.
      const exited = app.waitUntilExit();
      app.unmount();
      await exited;
    },
  };
}

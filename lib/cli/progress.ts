/** Where progress goes: stderr, so stdout stays clean for --json and pipes. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface Progress {
  update(done: number, detail?: string): void;
  done(detail?: string): void;
}

const WIDTH = 30;

/**
 * A progress bar redrawn in place on a terminal; elsewhere (CI logs, files) one line per
 * tenth of the way, so logs stay short.
 */
export function createProgress(label: string, total: number, stream: ProgressStream): Progress {
  let lastDecile = -1;
  const render = (done: number, detail = '') => {
    const share = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(share * WIDTH);
    const percent = `${Math.floor(share * 100)}%`.padStart(4);
    return `${label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${percent} ${done}/${total}${detail ? ` ${detail}` : ''}`;
  };
  return {
    update(done, detail) {
      if (stream.isTTY) {
        stream.write(`\r${render(done, detail)}\x1b[K`);
        return;
      }
      const decile = total > 0 ? Math.floor((done / total) * 10) : 10;
      if (decile > lastDecile) {
        lastDecile = decile;
        stream.write(`${render(done, detail)}\n`);
      }
    },
    done(detail) {
      if (stream.isTTY) stream.write(`\r${render(total, detail)}\x1b[K\n`);
      else if (lastDecile < 10) stream.write(`${render(total, detail)}\n`);
    },
  };
}

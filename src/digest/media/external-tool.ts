import { execFile } from 'node:child_process';
import { GraphmemixError } from '../../errors/graphmemix-error.ts';

/** The Debian package that carries each external tool (named in the error when it is missing). */
const PACKAGE_OF: Record<ExternalTool, string> = {
  ffprobe: 'ffmpeg',
  ffmpeg: 'ffmpeg',
  pdfinfo: 'poppler-utils',
  pdftotext: 'poppler-utils',
  pdftoppm: 'poppler-utils',
};

export type ExternalTool = 'ffprobe' | 'ffmpeg' | 'pdfinfo' | 'pdftotext' | 'pdftoppm';

export interface ToolRun {
  timeoutMs: number;
  maxOutputBytes: number;
  /** Binary stdout (images); text (utf8) otherwise. */
  binary?: boolean;
}

/**
 * Runs a media tool with a fixed argument list: execFile, never a shell, so no file name can inject a
 * command; a file path argument is always preceded by the tool's own option syntax or `--` where the tool
 * takes one, and callers pass absolute paths (a name starting with '-' cannot read as an option).
 * Bounded by time (SIGKILL) and output bytes. A tool that is not installed is a CONFIG error naming the
 * Debian package; any other failure is INVALID_INPUT naming the tool (a malformed file).
 */
export function runTool(tool: ExternalTool, args: readonly string[], run: ToolRun): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      tool,
      args as string[],
      {
        timeout: run.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: run.maxOutputBytes,
        encoding: 'buffer',
        windowsHide: true,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C.UTF-8' },
      },
      (error, stdout, stderr) => {
        if (!error) {
          resolve(stdout);
          return;
        }
        const failure = error as NodeJS.ErrnoException & { killed?: boolean; signal?: string };
        if (failure.code === 'ENOENT') {
          reject(missingTool(tool));
          return;
        }
        const why = failure.killed
          ? `ran over ${run.timeoutMs} ms and was stopped`
          : failure.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER'
            ? `wrote more than ${run.maxOutputBytes} bytes`
            : stableMessage(stderr.toString('utf8'), failure.message);
        reject(new GraphmemixError('INVALID_INPUT', `${tool} failed: ${why}`));
      },
    );
  });
}

const available = new Map<ExternalTool, Promise<boolean>>();

/** Whether a tool is installed (detected once per process by running `-version` / `-v`). */
export function hasTool(tool: ExternalTool): Promise<boolean> {
  let known = available.get(tool);
  if (known === undefined) {
    const flag = tool === 'ffprobe' || tool === 'ffmpeg' ? '-version' : '-v';
    known = runTool(tool, [flag], { timeoutMs: 10_000, maxOutputBytes: 1024 * 1024 }).then(
      () => true,
      (error: unknown) => !(error instanceof GraphmemixError && error.code === 'CONFIG'),
    );
    available.set(tool, known);
  }
  return known;
}

export function missingTool(tool: ExternalTool): GraphmemixError {
  return new GraphmemixError(
    'CONFIG',
    `${tool} is not installed: video and PDF digest need it (Debian: apt-get install ${PACKAGE_OF[tool]})`,
    { details: { tool, package: PACKAGE_OF[tool] } },
  );
}

/**
 * The last lines of a tool's stderr without process-specific noise (ffmpeg prints `[mov @ 0x55e5...]`):
 * the same malformed file gives the same message, so a re-import of it is unchanged.
 */
function stableMessage(stderr: string, fallback: string): string {
  const text = stderr.trim().split('\n').slice(-2).join(' ') || fallback;
  return text.replace(/\s*@\s*0x[0-9a-f]+/gi, '').slice(0, 300);
}

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
  /** Memory the run may allocate (RLIMIT_DATA, Linux only; MediaLimits.toolMaxMemoryBytes). Absent: unbounded. */
  maxMemoryBytes?: number;
  /** Binary stdout (images); text (utf8) otherwise. */
  binary?: boolean;
}

/**
 * Runs a media tool with a fixed argument list: execFile, never a shell over its arguments (the memory bound
 * runs one fixed script that receives them as positional parameters), so no file name can inject a command;
 * a file path argument is always preceded by the tool's own option syntax or `--` where the tool takes one,
 * and callers pass absolute paths (a name starting with '-' cannot read as an option). Bounded by time
 * (SIGKILL), output bytes and, when given, memory. A tool that is not installed is a CONFIG error naming the
 * Debian package; any other failure is INVALID_INPUT naming the tool (a malformed file).
 */
export function runTool(tool: ExternalTool, args: readonly string[], run: ToolRun): Promise<Buffer> {
  const [file, argv] = boundedCommand(tool, args, run.maxMemoryBytes);
  return new Promise((resolve, reject) => {
    execFile(
      file,
      argv,
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
        // The bounding shell says "not found" (status 127) where a direct run gets ENOENT; 127 is also the
        // dynamic loader failing under the memory bound, which is the tool failing, not a missing package.
        const notFound =
          file === SHELL && (failure.code as unknown) === 127 && /not found/.test(stderr.toString());
        if (failure.code === 'ENOENT' || notFound) {
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

const SHELL = '/bin/sh';
/**
 * Sets the memory limit, then becomes the tool (`exec`): the tool and its arguments are the script's
 * positional parameters, never part of the script, so no file name reaches a shell parser.
 */
const BOUNDED = 'ulimit -d "$1" && shift && exec "$@"';

/**
 * The command line of one run: the tool itself, or on Linux with a memory bound the shell above. RLIMIT_DATA
 * (`ulimit -d`, KiB) counts what a process writes to (heap, anonymous maps, thread stacks), not address space
 * it only reserves: a virtual-memory cap (`-v`) of 512 MiB already failed ffmpeg on a 160 x 120 clip here, while
 * 128 MiB of data was enough for it and 1 GiB stopped the 20,000-pixel JPEG 2000 render (1.6 GB otherwise).
 */
function boundedCommand(tool: ExternalTool, args: readonly string[], maxBytes?: number): [string, string[]] {
  if (maxBytes === undefined || process.platform !== 'linux') return [tool, [...args]];
  return [SHELL, ['-c', BOUNDED, 'sh', String(Math.max(1, Math.floor(maxBytes / 1024))), tool, ...args]];
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

// What the extension sends the server and how it starts it, as plain functions of the user's
// settings: no `vscode` import, so node's test runner checks them without an editor.

/**
 * The `sage.*` settings the server understands (sage_npu.server.server.EditorSettings), in its
 * nesting and camelCase. Only these are forwarded: the server answers any other key under
 * `sage` with an "unknown setting" warning.
 */
export const SERVER_SETTINGS = [
    'eval.backend',
    'eval.chip',
    'eval.trials',
    'eval.seed',
    'eval.runTimeoutS',
    'server.debounceS',
    'server.codeLens',
    'agent.turns',
] as const;

/** Settings read only by the extension; changing one restarts the server. */
export const LAUNCH_SETTINGS = ['interpreter', 'serverCommand'] as const;

/** The module `python -m` runs: `sage-npu serve` without relying on the console script being on PATH. */
export const SERVER_MODULE_ARGS = ['-m', 'sage_npu.cli', 'serve'];

export type ServerSettingsPayload = { sage: Record<string, Record<string, unknown>> };

/**
 * The payload of initializationOptions and workspace/didChangeConfiguration.
 *
 * `explicit(key)` returns the value the user set (any scope) or undefined. Values left at
 * their default are not sent, so the server's own defaults (its --config file, SAGE_NPU_*
 * variables) stay in force, and clearing a setting in the editor restores them.
 */
export function serverSettings(explicit: (key: string) => unknown): ServerSettingsPayload {
    const sage: Record<string, Record<string, unknown>> = {};
    for (const key of SERVER_SETTINGS) {
        const value = explicit(key);
        if (value === undefined || value === null) {
            continue;
        }
        const [part, name] = key.split('.');
        (sage[part] ??= {})[name] = value;
    }
    return { sage };
}

export interface Launch {
    command: string;
    args: string[];
    /** Where the command came from, for the log and error messages. */
    origin: 'sage.serverCommand' | 'sage.interpreter' | 'Python extension' | 'PATH';
    /** The interpreter part, when the server runs as `<python> -m sage_npu.cli serve`. */
    interpreter?: string[];
}

/**
 * How to start the server, first match wins: `sage.serverCommand` as given; `sage.interpreter`;
 * the Python extension's interpreter for the workspace; `python3` (`python` on Windows) on PATH.
 */
export function launchCommand(
    settings: { serverCommand?: string[]; interpreter?: string[] },
    fromPythonExtension: string[] | undefined,
    platform: string = process.platform,
): Launch {
    const nonEmpty = (a: string[] | undefined) => (a ?? []).filter((s) => s.trim() !== '');
    const command = nonEmpty(settings.serverCommand);
    if (command.length > 0) {
        return { command: command[0], args: command.slice(1), origin: 'sage.serverCommand' };
    }
    const pick = (interpreter: string[], origin: Launch['origin']): Launch => ({
        command: interpreter[0],
        args: [...interpreter.slice(1), ...SERVER_MODULE_ARGS],
        origin,
        interpreter,
    });
    const configured = nonEmpty(settings.interpreter);
    if (configured.length > 0) {
        return pick(configured, 'sage.interpreter');
    }
    const found = nonEmpty(fromPythonExtension);
    if (found.length > 0) {
        return pick(found, 'Python extension');
    }
    return pick([platform === 'win32' ? 'python' : 'python3'], 'PATH');
}

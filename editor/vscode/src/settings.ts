// What the extension sends the server and how it starts it, as plain functions of the user's
// settings: no `vscode` import, so node's test runner checks them without an editor.

/**
 * The `sage.*` settings the server understands (sage_npu.settings.Settings), in its
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
    'agent.llm.baseUrl',
    'agent.llm.model',
    'agent.llm.apiKeyEnv',
    'agent.llm.timeoutS',
    'memory.db',
    'memory.embedder',
] as const;

/** Settings read only by the extension; changing one restarts the server. */
export const LAUNCH_SETTINGS = ['interpreter', 'serverCommand'] as const;

/**
 * Settings that decide where the API key goes. A workspace's own settings must not redirect
 * the key to another endpoint or variable, so only the user's value counts (package.json also
 * declares them with `"scope": "machine"`, which keeps them out of workspace settings).
 */
export const USER_ONLY_SETTINGS: readonly string[] = ['agent.llm.baseUrl', 'agent.llm.apiKeyEnv'];

/** Changing one of these restarts the server: they shape its command line or its environment. */
export const RESTART_SETTINGS: readonly string[] = [...LAUNCH_SETTINGS, 'agent.llm.apiKeyEnv'];

/**
 * Settings declared with a machine scope in package.json (`machine`, `machine-overridable`). In a
 * remote window they live in the remote machine's settings: the User tab does not offer them.
 */
export const MACHINE_SETTINGS: readonly string[] = [...LAUNCH_SETTINGS, ...USER_ONLY_SETTINGS, 'memory.db'];

/**
 * A command that opens the settings editor, and its argument. An object, not the bare query string:
 * openRemoteSettings drops a string argument (only openSettings turns one into a query).
 */
export interface SettingsCommand {
    command: 'workbench.action.openRemoteSettings' | 'workbench.action.openSettings';
    args: { query: string };
}

/**
 * Where a "Open Settings" button for `sage.<key>` goes: the remote machine's settings for a
 * machine-scoped setting in a remote window (`vscode.env.remoteName` set), the settings editor otherwise.
 */
export function settingsCommand(key: string, remoteName: string | undefined): SettingsCommand {
    const args = { query: `sage.${key}` };
    if (remoteName && MACHINE_SETTINGS.includes(key)) {
        return { command: 'workbench.action.openRemoteSettings', args };
    }
    return { command: 'workbench.action.openSettings', args };
}

/** The module `python -m` runs: `sage-npu serve` without relying on the console script being on PATH. */
export const SERVER_MODULE_ARGS = ['-m', 'sage_npu.cli', 'serve'];

/** The values of one setting per scope, as `WorkspaceConfiguration.inspect` returns them. */
export interface ScopedValues {
    globalValue?: unknown;
    workspaceValue?: unknown;
    workspaceFolderValue?: unknown;
}

/** The value the user set for `key` (the most specific scope wins), or undefined when left at the default. */
export function explicitValue(key: string, seen: ScopedValues | undefined): unknown {
    if (!seen) {
        return undefined;
    }
    if (USER_ONLY_SETTINGS.includes(key)) {
        return seen.globalValue;
    }
    return seen.workspaceFolderValue ?? seen.workspaceValue ?? seen.globalValue;
}

type Nested = { [key: string]: unknown };
export type ServerSettingsPayload = { sage: Nested };

/**
 * The payload of initializationOptions and workspace/didChangeConfiguration.
 *
 * `explicit(key)` returns the value the user set (any scope) or undefined. Values left at
 * their default are not sent, so the server's own defaults (its --config file, SAGE_NPU_*
 * variables) stay in force, and clearing a setting in the editor restores them. An empty
 * string means "unset" too: the optional text settings (`agent.llm.baseUrl`, `memory.db`, ...)
 * are declared with `""` as their default so the settings editor shows a text box.
 */
export function serverSettings(explicit: (key: string) => unknown): ServerSettingsPayload {
    const sage: Nested = {};
    for (const key of SERVER_SETTINGS) {
        const value = explicit(key);
        if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
            continue;
        }
        const parts = key.split('.');
        let node = sage;
        for (const part of parts.slice(0, -1)) {
            node = (node[part] ??= {}) as Nested;
        }
        node[parts[parts.length - 1]] = value;
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

// The interpreter selected in the Python extension (ms-python.python), when it is installed.
// Typed here with the few members used, so the extension neither needs the Python extension
// nor a package for its API.
import { Disposable, Event, extensions, Uri } from 'vscode';

interface EnvironmentPath {
    readonly id: string;
    readonly path: string;
}

interface PythonEnvironmentsApi {
    getActiveEnvironmentPath(resource?: Uri): EnvironmentPath;
    resolveEnvironment(env: EnvironmentPath | string): Promise<{ executable: { uri?: Uri } } | undefined>;
    readonly onDidChangeActiveEnvironmentPath: Event<unknown>;
}

async function environmentsApi(): Promise<PythonEnvironmentsApi | undefined> {
    const extension = extensions.getExtension<{ environments?: PythonEnvironmentsApi } | undefined>('ms-python.python');
    if (!extension) {
        return undefined;
    }
    const api = extension.isActive ? extension.exports : await extension.activate();
    return api?.environments;
}

/** The active interpreter for `resource` (a file or workspace folder), or undefined. */
export async function pythonExtensionInterpreter(resource?: Uri): Promise<string[] | undefined> {
    try {
        const api = await environmentsApi();
        if (!api) {
            return undefined;
        }
        const env = await api.resolveEnvironment(api.getActiveEnvironmentPath(resource));
        const exe = env?.executable.uri?.fsPath;
        return exe ? [exe] : undefined;
    } catch {
        // An old or failing Python extension means "not found": the caller falls back to PATH.
        return undefined;
    }
}

/** Calls `listener` when the user selects another interpreter in the Python extension. */
export async function onDidChangePythonInterpreter(listener: () => unknown): Promise<Disposable | undefined> {
    try {
        return (await environmentsApi())?.onDidChangeActiveEnvironmentPath(() => listener());
    } catch {
        return undefined;
    }
}

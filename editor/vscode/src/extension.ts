// SAGE for Ascend C: a thin client. It finds a Python with sage-npu, starts
// `python -m sage_npu.cli serve` over stdio, forwards the `sage.*` settings and restarts the
// server when the way to start it changes. Everything else (evaluation on save, diagnostics,
// code lenses) is the server's, tested once for every editor.
import { execFile } from 'child_process';
import * as vscode from 'vscode';
import {
    DidChangeConfigurationNotification,
    DocumentSelector,
    LanguageClient,
    LanguageClientOptions,
    ServerOptions,
} from 'vscode-languageclient/node';
import { onDidChangePythonInterpreter, pythonExtensionInterpreter } from './python';
import { Launch, LAUNCH_SETTINGS, launchCommand, serverSettings } from './settings';

// Kernels (.asc, or .cpp/.h that the server recognises as Ascend C by their content) and the
// two Python files of a task, whose save also re-evaluates the kernel.
const DOCUMENTS: DocumentSelector = [
    { scheme: 'file', language: 'ascendc' },
    { scheme: 'file', language: 'cpp' },
    { scheme: 'file', language: 'c' },
    { scheme: 'file', language: 'python', pattern: '**/{host,reference}.py' },
];

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let launchedFrom: Launch['origin'] | undefined;
// Restarts run one after another: a settings change during a start waits for it.
let queue: Promise<void> = Promise.resolve();

/** The value the user set for `sage.<key>` in any scope, or undefined when left at the default. */
function explicit(key: string): unknown {
    const seen = vscode.workspace.getConfiguration('sage').inspect(key);
    return seen?.workspaceFolderValue ?? seen?.workspaceValue ?? seen?.globalValue;
}

function workspaceDir(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** Undefined when `interpreter` can import the server, else what went wrong. */
function cannotImportServer(interpreter: string[]): Promise<string | undefined> {
    return new Promise((resolve) => {
        execFile(interpreter[0], [...interpreter.slice(1), '-c', 'import sage_npu.cli'], { timeout: 30000 },
            (error, _stdout, stderr) => {
                if (!error) {
                    resolve(undefined);
                    return;
                }
                const last = stderr.trim().split('\n').pop();
                resolve(last || error.message);
            });
    });
}

async function stop(): Promise<void> {
    const old = client;
    client = undefined;
    if (old) {
        try {
            await old.stop(5000);
        } catch (e) {
            output.warn(`the previous server did not stop cleanly: ${e}`);
        }
    }
}

async function start(reason: string): Promise<void> {
    await stop();
    const config = vscode.workspace.getConfiguration('sage');
    const launch = launchCommand(
        { serverCommand: config.get<string[]>('serverCommand'), interpreter: config.get<string[]>('interpreter') },
        await pythonExtensionInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri),
    );
    launchedFrom = launch.origin;
    output.info(`starting the server (${reason}): ${[launch.command, ...launch.args].join(' ')} [from ${launch.origin}]`);

    if (launch.interpreter) {
        const problem = await cannotImportServer(launch.interpreter);
        if (problem) {
            const python = launch.interpreter.join(' ');
            output.error(`${python} cannot import sage_npu: ${problem}`);
            const choice = await vscode.window.showErrorMessage(
                `SAGE: the language server did not start: ${python} (from ${launch.origin}) cannot import ` +
                `sage_npu (${problem}). Install sage-npu into it (${python} -m pip install -e <sage-npu checkout>) ` +
                'or set sage.interpreter to a Python that has it.',
                'Open Settings',
                'Show Log',
            );
            if (choice === 'Open Settings') {
                await vscode.commands.executeCommand('workbench.action.openSettings', 'sage.interpreter');
            } else if (choice === 'Show Log') {
                output.show();
            }
            return;
        }
    }

    const cwd = workspaceDir();
    const serverOptions: ServerOptions = { command: launch.command, args: launch.args, options: cwd ? { cwd } : {} };
    const clientOptions: LanguageClientOptions = {
        documentSelector: DOCUMENTS,
        outputChannel: output,
        // A function, so a restart by the client itself (after a crash) sends current settings.
        initializationOptions: () => serverSettings(explicit),
    };
    const next = new LanguageClient('sage', 'SAGE', serverOptions, clientOptions);
    try {
        await next.start();
        client = next;
        output.info('server started');
    } catch (e) {
        output.error(`the server failed to start: ${e}`);
        void vscode.window.showErrorMessage(`SAGE: the language server failed to start: ${e}. See the SAGE output.`);
    }
}

function restart(reason: string): Promise<void> {
    queue = queue.then(() => start(reason)).catch((e) => output.error(`restart failed: ${e}`));
    return queue;
}

async function settingsChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (LAUNCH_SETTINGS.some((key) => e.affectsConfiguration(`sage.${key}`))) {
        await restart('sage.interpreter or sage.serverCommand changed');
    } else if (e.affectsConfiguration('sage.eval') || e.affectsConfiguration('sage.server')) {
        // The server applies these live (it rebuilds its evaluator when sage.eval changes).
        if (client?.isRunning()) {
            await client.sendNotification(DidChangeConfigurationNotification.type, { settings: serverSettings(explicit) });
        }
    }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    output = vscode.window.createOutputChannel('SAGE', { log: true });
    context.subscriptions.push(
        output,
        vscode.commands.registerCommand('sage.restartServer', () => restart('restart command')),
        vscode.commands.registerCommand('sage.showOutput', () => output.show()),
        vscode.workspace.onDidChangeConfiguration(settingsChanged),
    );
    const pythonChanged = await onDidChangePythonInterpreter(() => {
        if (launchedFrom === 'Python extension' || launchedFrom === 'PATH') {
            void restart('the Python extension selected another interpreter');
        }
    });
    if (pythonChanged) {
        context.subscriptions.push(pythonChanged);
    }
    // Not awaited: activation finishes at once, the server comes up in the background.
    void restart('activation');
}

export async function deactivate(): Promise<void> {
    await queue;
    await stop();
}

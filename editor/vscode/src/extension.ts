// SAGE for Ascend C: a thin client. It finds a Python with sage-npu, starts
// `python -m sage_npu.cli serve` over stdio with the LLM API key from VS Code's secret storage
// in its environment, forwards the `sage.*` settings and restarts the server when the way to
// start it changes. It adds commands for the server's own (evaluate, optimize, accept or reject
// a suggestion, show the memory), a status bar item with the last result and a diff view of a
// suggestion. Evaluation, diagnostics, code lenses and the agent are the server's, tested once
// for every editor.
import { execFile } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';
import {
    DidChangeConfigurationNotification,
    DocumentSelector,
    ExecuteCommandRequest,
    LanguageClient,
    LanguageClientOptions,
    ServerOptions,
    State,
    StaticFeature,
} from 'vscode-languageclient/node';
import { CPPTOOLS, debugStep } from './debug';
import { DEFAULT_KEY_ENV, serverEnvironment } from './env';
import { MemoryOverview, memoryMarkdown } from './memory';
import { onDidChangePythonInterpreter, pythonExtensionInterpreter } from './python';
import { ServerProgress } from './progress';
import { SuggestionReview } from './review';
import { explicitValue, Launch, launchCommand, RESTART_SETTINGS, serverSettings, settingsCommand } from './settings';
import { isFailure, isReportSummary, ReportSummary, serverDownView, ServerState, statusText, statusTooltip } from './status';
import { isDecisionNotice, isEpisodeNotice, isSuggestionNotice, ownForFile, remember, SuggestionNotice } from './suggestions';
import { VirtualDocuments } from './virtualDocuments';

// Kernels (.asc, or .cpp/.h that the server recognises as Ascend C by their content) and the
// two Python files of a task, whose save also re-evaluates the kernel.
const DOCUMENTS: DocumentSelector = [
    { scheme: 'file', language: 'ascendc' },
    { scheme: 'file', language: 'cpp' },
    { scheme: 'file', language: 'c' },
    { scheme: 'file', language: 'python', pattern: '**/{host,reference}.py' },
];

// The server's command ids (sage_npu.server.features.suggestions). The client registers them
// in VS Code itself, so the extension's own commands need other ids.
const SERVER = {
    evaluate: 'sage.evaluate',
    optimize: 'sage.optimize',
    accept: 'sage.acceptSuggestion',
    reject: 'sage.rejectSuggestion',
    showMemory: 'sage.showMemory',
    debugBlock: 'sage.debugBlock',
};

/**
 * Tells the server (experimental client capabilities) that this client shows `sage/episode` and
 * `sage/decision` itself, and starts the debug session of a sage.debugBlock answer itself, so it
 * sends no window/showMessage saying the same.
 */
const RENDERS_NOTICES: StaticFeature = {
    fillClientCapabilities: (capabilities) => {
        const earlier: unknown = capabilities.experimental;
        capabilities.experimental = {
            ...(typeof earlier === 'object' && earlier !== null ? earlier : {}), sageNotices: true, sageDebugLaunch: true,
        };
    },
    initialize: () => undefined,
    getState: () => ({ kind: 'static' }),
    clear: () => undefined,
};

/** Where the LLM API key is kept in VS Code's secret storage. */
const KEY_SECRET = 'sage.agent.llm.apiKey';

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let secrets: vscode.SecretStorage;
let review: SuggestionReview;
let memoryDocuments: VirtualDocuments;
let statusItem: vscode.StatusBarItem;
let reports: ReportSummary[] = [];
let busy: string | undefined;
let serverState: ServerState = 'starting';
const progress = new ServerProgress();
// The client whose state the status bar follows: a client being replaced reports 'stopped' too.
let launching: LanguageClient | undefined;
let launchedFrom: Launch['origin'] | undefined;
// Restarts run one after another: a settings change during a start waits for it.
let queue: Promise<void> = Promise.resolve();

/** The value the user set for `sage.<key>`, or undefined when left at the default. */
function explicit(key: string): unknown {
    return explicitValue(key, vscode.workspace.getConfiguration('sage').inspect(key));
}

function keyEnvName(): string {
    const name = explicit('agent.llm.apiKeyEnv');
    return typeof name === 'string' && name.trim() !== '' ? name.trim() : DEFAULT_KEY_ENV;
}

function workspaceDir(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

function errorText(e: unknown): string {
    return e instanceof Error ? e.message : String(e);
}

// ---- status bar ----

function activeFile(): string | undefined {
    const uri = vscode.window.activeTextEditor?.document.uri;
    return uri?.scheme === 'file' ? uri.fsPath : undefined;
}

function updateStatus(): void {
    const config = vscode.workspace.getConfiguration('sage');
    const configured = { backend: config.get<string>('eval.backend', 'sim'), chip: config.get<string>('eval.chip', '910B2') };
    const down = serverDownView(serverState);
    if (down) {
        statusItem.text = down.text;
        statusItem.tooltip = down.tooltip;
        statusItem.command = down.command;
        statusItem.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
        return;
    }
    const report = ownForFile(reports, activeFile());
    statusItem.text = statusText(configured, report, busy);
    statusItem.tooltip = statusTooltip(report);
    statusItem.command = 'sage.showOutput';
    statusItem.backgroundColor = isFailure(report) ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
}

function setServerState(state: ServerState): void {
    serverState = state;
    updateStatus();
}

const STATES: Record<State, ServerState> = { [State.Starting]: 'starting', [State.Running]: 'running', [State.Stopped]: 'stopped' };

/** Runs `work` with `label` ("optimizing") in the status bar. */
async function whileBusy<T>(label: string, work: () => Promise<T>): Promise<T> {
    busy = label;
    updateStatus();
    try {
        return await work();
    } finally {
        busy = undefined;
        updateStatus();
    }
}

// ---- the server ----

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
    launching = undefined; // its 'stopped' is a restart's, not a crash
    if (old) {
        try {
            await old.stop(5000);
        } catch (e) {
            output.warn(`the previous server did not stop cleanly: ${errorText(e)}`);
        }
    }
}

async function start(reason: string): Promise<void> {
    await stop();
    setServerState('starting');
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
            launching = undefined;
            setServerState('stopped');
            const choice = await vscode.window.showErrorMessage(
                `SAGE: the language server did not start: ${python} (from ${launch.origin}) cannot import ` +
                `sage_npu (${problem}). Install sage-npu into it (${python} -m pip install -e <sage-npu checkout>) ` +
                'or set sage.interpreter to a Python that has it.',
                'Open Settings',
                'Show Log',
            );
            if (choice === 'Open Settings') {
                const open = settingsCommand('interpreter', vscode.env.remoteName);
                await vscode.commands.executeCommand(open.command, open.args);
            } else if (choice === 'Show Log') {
                output.show();
            }
            return;
        }
    }

    const environment = serverEnvironment(process.env, keyEnvName(), await secrets.get(KEY_SECRET));
    output.info(environment.note);
    if (environment.problem) {
        output.warn(environment.problem);
        void vscode.window.showWarningMessage(`SAGE: ${environment.problem}. The server starts without the stored key.`);
    }
    const cwd = workspaceDir();
    const serverOptions: ServerOptions = {
        command: launch.command,
        args: launch.args,
        options: { env: environment.env, ...(cwd ? { cwd } : {}) },
    };
    const clientOptions: LanguageClientOptions = {
        documentSelector: DOCUMENTS,
        outputChannel: output,
        // A function, so a restart by the client itself (after a crash) sends current settings.
        initializationOptions: () => serverSettings(explicit),
        middleware: {
            // The lightbulb runs the server's accept/reject commands directly: keep our list in step.
            // The "Debug block N" lens runs sage.debugBlock: its answer is a debug session to start.
            executeCommand: async (command, args, next) => {
                if ((command === SERVER.accept || command === SERVER.reject) && typeof args[0] === 'string') {
                    review.decided(args[0]);
                }
                if (command === SERVER.debugBlock) {
                    const answer: unknown = await whileBusy('building for gdb', () => Promise.resolve<unknown>(next(command, args)));
                    await debugWith(answer);
                    return answer;
                }
                const result: unknown = await next(command, args);
                return result;
            },
        },
    };
    const next = new LanguageClient('sage', 'SAGE', serverOptions, clientOptions);
    launching = next;
    next.onDidChangeState((change) => {
        if (launching === next) {
            setServerState(STATES[change.newState]);
        }
    });
    next.onNotification('sage/report', (params: unknown) => {
        if (isReportSummary(params)) {
            reports = remember(reports, params);
            updateStatus();
        }
    });
    next.onNotification('sage/suggestion', (params: unknown) => {
        if (isSuggestionNotice(params)) {
            review.received(params);
        } else {
            output.warn(`ignored a sage/suggestion notification of an unexpected shape: ${JSON.stringify(params).slice(0, 200)}`);
        }
    });
    next.onNotification('sage/episode', (params: unknown) => {
        if (isEpisodeNotice(params)) {
            review.announced(params);
        } else {
            output.warn(`ignored a sage/episode notification of an unexpected shape: ${JSON.stringify(params).slice(0, 200)}`);
        }
    });
    next.onNotification('sage/decision', (params: unknown) => {
        if (isDecisionNotice(params)) {
            review.decidedBy(params);
        } else {
            output.warn(`ignored a sage/decision notification of an unexpected shape: ${JSON.stringify(params).slice(0, 200)}`);
        }
    });
    next.registerFeature(RENDERS_NOTICES);
    try {
        await next.start();
        client = next;
        progress.attach(next);
        output.info('server started');
    } catch (e) {
        output.error(`the server failed to start: ${errorText(e)}`);
        setServerState('stopped');
        void vscode.window.showErrorMessage(`SAGE: the language server failed to start: ${errorText(e)}. See the SAGE output.`);
    }
}

function restart(reason: string): Promise<void> {
    queue = queue.then(() => start(reason)).catch((e) => output.error(`restart failed: ${errorText(e)}`));
    return queue;
}

/** Runs a server command; undefined (and said so) when the server is not running. */
async function runServerCommand(command: string, ...args: unknown[]): Promise<unknown> {
    if (!client?.isRunning()) {
        const choice = await vscode.window.showWarningMessage(
            'SAGE: the language server is not running. See the SAGE log for why, then run "SAGE: Restart Language Server".',
            'Show Log');
        if (choice === 'Show Log') {
            output.show();
        }
        return undefined;
    }
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
}

async function settingsChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (e.affectsConfiguration('sage.eval')) {
        updateStatus();
    }
    const restartKey = RESTART_SETTINGS.find((key) => e.affectsConfiguration(`sage.${key}`));
    if (restartKey) {
        await restart(`sage.${restartKey} changed`);
    } else if (['eval', 'server', 'agent', 'memory'].some((part) => e.affectsConfiguration(`sage.${part}`))) {
        // The server applies these live (it rebuilds its evaluator when sage.eval changes).
        if (client?.isRunning()) {
            await client.sendNotification(DidChangeConfigurationNotification.type, { settings: serverSettings(explicit) });
        }
    }
}

// ---- commands ----

/** The active editor's file document, saved; undefined (and said so) when there is none. */
async function activeKernel(action: string): Promise<vscode.TextDocument | undefined> {
    const document = vscode.window.activeTextEditor?.document;
    if (!document || document.uri.scheme !== 'file') {
        void vscode.window.showInformationMessage(
            `SAGE: open an Ascend C kernel (or its task's host.py or reference.py) to ${action} it.`);
        return undefined;
    }
    // The server evaluates the files on disk.
    if (document.isDirty && !(await document.save())) {
        void vscode.window.showWarningMessage(`SAGE: ${path.basename(document.fileName)} could not be saved; nothing was started.`);
        return undefined;
    }
    return document;
}

function protocolUri(document: vscode.TextDocument): string {
    return client ? client.code2ProtocolConverter.asUri(document.uri) : document.uri.toString();
}

async function evaluateKernel(): Promise<void> {
    const document = await activeKernel('evaluate');
    if (!document) {
        return;
    }
    const answer = (await runServerCommand(SERVER.evaluate, protocolUri(document))) as { started?: boolean; reason?: string } | undefined;
    if (answer && !answer.started) {
        void vscode.window.showWarningMessage(
            `SAGE: ${path.basename(document.fileName)} was not evaluated: ${answer.reason ?? 'the server declined'}.`);
    }
}

/** sage.optimize's answer, at once: whether an episode started (its end comes as sage/episode). */
interface OptimizeAnswer {
    started?: boolean;
    task?: string;
    reason?: string;
}

async function optimizeKernel(): Promise<void> {
    const document = await activeKernel('optimize');
    if (!document) {
        return;
    }
    const name = path.basename(document.fileName);
    const answer = (await whileBusy('optimizing', () => runServerCommand(SERVER.optimize, protocolUri(document)))) as
        OptimizeAnswer | undefined;
    if (!answer) {
        return;
    }
    output.info(`optimize ${name}: ${JSON.stringify(answer)}`);
    if (!answer.started) {
        void vscode.window.showWarningMessage(`SAGE: no episode for ${name}: ${answer.reason ?? 'the server declined'}.`);
    }
    // The server answers at once; the episode's progress shows while it runs, and its end comes
    // as sage/episode (offered with Show Diff / Accept / Reject when it left a suggestion).
}

/** Starts what a sage.debugBlock answer asks for: a cppdbg session stopped in the block, else gdb in a terminal. */
async function debugWith(answer: unknown): Promise<void> {
    const step = debugStep(answer, vscode.extensions.getExtension(CPPTOOLS) !== undefined);
    if (step.kind === 'refused') {
        void vscode.window.showWarningMessage(step.message);
        return;
    }
    if (step.kind === 'terminal') {
        const terminal = vscode.window.createTerminal({ name: 'SAGE: gdb' });
        terminal.show();
        terminal.sendText(step.line);
        void vscode.window.showInformationMessage(step.note);
        return;
    }
    // cppdbg stops only at breakpoints it knows: the stop is one of VS Code's, removed when the session ends.
    const at = new vscode.Location(vscode.Uri.file(step.stop.file), new vscode.Position(step.stop.line - 1, 0));
    const stop = new vscode.SourceBreakpoint(at, true, step.stop.condition);
    vscode.debug.addBreakpoints([stop]);
    const name = step.configuration.name;
    const ended = vscode.debug.onDidTerminateDebugSession((session) => {
        if (session.configuration.name === name) {
            vscode.debug.removeBreakpoints([stop]);
            ended.dispose();
        }
    });
    const started = await vscode.debug.startDebugging(vscode.workspace.workspaceFolders?.[0],
        step.configuration as vscode.DebugConfiguration);
    if (!started) {
        vscode.debug.removeBreakpoints([stop]);
        ended.dispose();
        void vscode.window.showWarningMessage('SAGE: the debugger did not start; see the Debug Console.');
    }
}

/** "SAGE: Debug Block...": the block to stop in, asked for, then as the lens does. */
async function debugKernelBlock(): Promise<void> {
    const document = await activeKernel('debug');
    if (!document) {
        return;
    }
    const typed = await vscode.window.showInputBox({
        title: 'SAGE: debug a block of this kernel in gdb',
        prompt: 'The block to stop in at the kernel entry (its block_idx)',
        value: '0',
        validateInput: (value) => (/^\d+$/.test(value.trim()) ? undefined : 'A block number: 0, 1, 2, ...'),
    });
    if (typed === undefined) {
        return;
    }
    const answer = await whileBusy('building for gdb',
        () => runServerCommand(SERVER.debugBlock, protocolUri(document), Number(typed.trim())));
    if (answer !== undefined) {
        await debugWith(answer);
    }
}

async function showMemory(): Promise<void> {
    const answer = (await runServerCommand(SERVER.showMemory)) as MemoryOverview | undefined;
    if (!answer) {
        return;
    }
    const uri = memoryDocuments.put('/SAGE memory.md', memoryMarkdown(answer));
    try {
        await vscode.commands.executeCommand('markdown.showPreview', uri);
    } catch {
        // Without the built-in Markdown extension: the text itself.
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    }
}

async function setApiKey(): Promise<void> {
    const name = keyEnvName();
    const key = await vscode.window.showInputBox({
        title: 'SAGE: LLM API key',
        prompt: `Kept in VS Code's secret storage and given to the language server as $${name}; never written to settings.`,
        password: true,
        ignoreFocusOut: true,
        validateInput: (value) => (value.trim() ? undefined : 'Empty. To remove the key, run "SAGE: Clear LLM API Key".'),
    });
    if (key === undefined) {
        return;
    }
    await secrets.store(KEY_SECRET, key.trim());
    void vscode.window.showInformationMessage(`SAGE: API key stored; the server restarts to receive it as $${name}.`);
}

async function clearApiKey(): Promise<void> {
    await secrets.delete(KEY_SECRET);
    void vscode.window.showInformationMessage('SAGE: API key removed from secret storage; the server restarts without it.');
}

/** A command handler whose failure is reported, not lost in an unhandled rejection. */
function command(id: string, handler: () => unknown): vscode.Disposable {
    return vscode.commands.registerCommand(id, async () => {
        try {
            await handler();
        } catch (e) {
            output.error(`${id} failed: ${errorText(e)}`);
            void vscode.window.showErrorMessage(`SAGE: ${id} failed: ${errorText(e)}. See the SAGE log.`);
        }
    });
}

function withSuggestion(act: (s: SuggestionNotice) => Promise<unknown>): () => Promise<void> {
    return async () => {
        const s = review.current();
        if (s) {
            await act(s);
        }
    };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    output = vscode.window.createOutputChannel('SAGE', { log: true });
    secrets = context.secrets;
    review = new SuggestionReview(runServerCommand, output);
    memoryDocuments = new VirtualDocuments('sage-memory');
    statusItem = vscode.window.createStatusBarItem('sage.status', vscode.StatusBarAlignment.Left, 0);
    statusItem.name = 'SAGE';
    statusItem.command = 'sage.showOutput';
    updateStatus();
    statusItem.show();
    context.subscriptions.push(
        output,
        review,
        memoryDocuments,
        statusItem,
        command('sage.evaluateKernel', evaluateKernel),
        command('sage.optimizeKernel', optimizeKernel),
        command('sage.debugKernelBlock', debugKernelBlock),
        command('sage.acceptLast', withSuggestion((s) => review.accept(s))),
        command('sage.rejectLast', withSuggestion((s) => review.reject(s))),
        command('sage.showSuggestionDiff', withSuggestion((s) => review.showDiff(s))),
        command('sage.reviewSuggestion', () => review.review()),
        command('sage.cancelOptimization', () => progress.cancelAll() ||
            vscode.window.showInformationMessage('SAGE: no optimization is running.')),
        command('sage.openMemory', showMemory),
        command('sage.setApiKey', setApiKey),
        command('sage.clearApiKey', clearApiKey),
        command('sage.restartServer', () => restart('restart command')),
        command('sage.showOutput', () => output.show()),
        vscode.workspace.onDidChangeConfiguration(settingsChanged),
        vscode.window.onDidChangeActiveTextEditor(updateStatus),
        // Also fires when another window changes the key.
        secrets.onDidChange((e) => {
            if (e.key === KEY_SECRET) {
                void restart('the LLM API key changed');
            }
        }),
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

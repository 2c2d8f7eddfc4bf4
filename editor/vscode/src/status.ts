// The status bar text: where kernels are evaluated and the last result, from the server's
// `sage/report` notification (sage_npu.server.features.evaluation.summary).

/** One evaluation, as the server sends it after each run. */
export interface ReportSummary {
    task: string;
    kernel: string;
    status: string;
    chip: string;
    backend: string;
    passed: number | null;
    trials: number | null;
    estimatedUs: number | null;
    bottleneck: string | null;
    /** True when the time comes from the CPU cost model, not an NPU. */
    estimated: boolean;
    errors: number;
}

export function isReportSummary(value: unknown): value is ReportSummary {
    const r = value as Partial<ReportSummary> | null;
    return typeof r === 'object' && r !== null && typeof r.task === 'string' && typeof r.status === 'string' &&
        typeof r.backend === 'string' && typeof r.chip === 'string';
}

function plural(n: number, word: string): string {
    return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** "correct 3/3, est. 1.23 us", "mismatch 1/3", "compile error, 2 errors". */
export function resultText(r: ReportSummary): string {
    const counted = r.passed !== null && r.trials !== null ? ` ${r.passed}/${r.trials}` : '';
    if (r.status === 'correct') {
        const time = r.estimatedUs !== null ? `, ${r.estimated ? 'est. ' : ''}${r.estimatedUs.toFixed(2)} us` : '';
        return `correct${counted}${time}`;
    }
    if (r.status === 'mismatch') {
        return `mismatch${counted}`;
    }
    const errors = r.errors > 0 ? `, ${plural(r.errors, 'error')}` : '';
    return `${r.status.replace(/_/g, ' ')}${errors}`;
}

/**
 * "SAGE sim 910B2: correct 3/3, est. 1.23 us". Before any report: the configured backend and
 * chip; `busy` ("optimizing") while a command the user started runs.
 */
export function statusText(configured: { backend: string; chip: string }, report?: ReportSummary, busy?: string): string {
    const where = report ? `${report.backend} ${report.chip}` : `${configured.backend} ${configured.chip}`;
    const parts = [report ? resultText(report) : undefined, busy ? `${busy}...` : undefined].filter(Boolean);
    const icon = busy ? '$(sync~spin) ' : '';
    return parts.length ? `${icon}SAGE ${where}: ${parts.join(', ')}` : `${icon}SAGE ${where}`;
}

export function statusTooltip(report?: ReportSummary): string {
    if (!report) {
        return 'SAGE: no evaluation yet (save a kernel, or run "SAGE: Evaluate Kernel"). Click for the log.';
    }
    const lines = [`${report.kernel}: ${resultText(report)}`];
    if (report.bottleneck) {
        lines.push(`bottleneck: ${report.bottleneck}`);
    }
    if (report.estimated && report.estimatedUs !== null) {
        lines.push('time estimated by the CPU cost model, not measured on an NPU');
    }
    lines.push('Click for the SAGE log.');
    return lines.join('\n');
}

/** Whether the status bar should show the result as a failure. */
export function isFailure(report?: ReportSummary): boolean {
    return report !== undefined && report.status !== 'correct';
}

/** The language client's state, as the status bar tells it (vscode-languageclient's State, by name). */
export type ServerState = 'starting' | 'running' | 'stopped';

/** What the status bar shows instead of the result while the server is down. */
export interface ServerDownView {
    text: string;
    tooltip: string;
    /** Clicking the item restarts the server. */
    command: 'sage.restartServer';
}

/**
 * Undefined while the server starts or runs; else a warning item that restarts it, so the bar
 * never shows the last result as if the server were still evaluating saves.
 */
export function serverDownView(state: ServerState): ServerDownView | undefined {
    if (state !== 'stopped') {
        return undefined;
    }
    return {
        text: '$(warning) SAGE: server stopped — Restart',
        tooltip: 'SAGE: the language server is not running, so saves are not evaluated. Click to restart it; ' +
            '"SAGE: Show Server Log" says why it stopped.',
        command: 'sage.restartServer',
    };
}

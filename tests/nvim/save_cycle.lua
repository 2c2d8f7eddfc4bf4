-- Drives the SAGE language server from a real Neovim (0.7+, headless), the way a user would:
-- open a kernel, attach the client, break the kernel in the buffer, :write, wait for the
-- server's diagnostic, repair it, :write, wait for the fault to clear, ask for code lenses;
-- check the lenses Neovim drew by itself (the README's `sage/report` handler refreshes them);
-- then break the task's host.py, :write it, and wait for the evaluation's diagnostic there.
--
-- Run: SAGE_NVIM_E2E=/path/config.json nvim --headless -u NONE -i NONE -n -c 'luafile save_cycle.lua'
-- The config (JSON) names the server command, the kernel, the line text to delete, the code
-- to wait for, the result file and the time limit of each wait. Everything observed is written
-- to the result file as JSON; the Python test asserts on it.

local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
local lsp = dofile(here .. "common.lua")
local result = lsp.result

lsp.main(function(cfg)
  vim.o.hidden = true
  -- As the README's snippet: Neovim 0.7 redraws lenses only when asked, so a verdict asks.
  result.reports = 0
  local client_id = lsp.start({
    ["sage/report"] = function()
      result.reports = result.reports + 1
      vim.lsp.codelens.refresh()
    end,
  })
  local bufnr = lsp.open(cfg.kernel, client_id)

  -- The fault: delete the configured line (the test deletes a FreeTensor, so a later
  -- AllocTensor finds its queue full).
  local lnum, removed = lsp.find_line(bufnr, cfg.remove)
  vim.api.nvim_buf_set_lines(bufnr, lnum, lnum + 1, false, {})
  vim.cmd("write")
  lsp.step("fault_saved")
  local seen = lsp.wait_for(cfg.timeout_ms, function()
    return lsp.has_code(bufnr, cfg.code)
  end)
  result.fault = { diagnostics = lsp.diagnostics(bufnr), seen = seen }
  if not seen then
    error(string.format("no %q diagnostic within %d ms of the save", cfg.code, cfg.timeout_ms))
  end
  lsp.step("fault_shown")

  -- The repair: put the line back and save; the fault must go and the summary lens appear.
  vim.api.nvim_buf_set_lines(bufnr, lnum, lnum, false, { removed })
  vim.cmd("write")
  lsp.step("fix_saved")
  local cleared = lsp.wait_for(cfg.timeout_ms, function()
    return not lsp.has_code(bufnr, cfg.code)
  end)
  result.fixed = { diagnostics = lsp.diagnostics(bufnr), cleared = cleared }
  if not cleared then
    error(string.format("the %q diagnostic was still shown %d ms after the repair", cfg.code, cfg.timeout_ms))
  end
  lsp.step("fault_cleared")
  -- The lens reflects the newest report, which is published with the diagnostics above;
  -- poll briefly in case the client answers before the server stored it.
  result.fixed.lenses = lsp.wait_for_lens(bufnr, "SAGE: correct", 10000)
  lsp.step("lenses")
  -- What Neovim drew without being asked here: the lenses its refresh on the report fetched.
  result.fixed.drawn = {}
  lsp.wait_for(10000, function()
    result.fixed.drawn = lsp.drawn_lens_titles(bufnr)
    for _, t in ipairs(result.fixed.drawn) do
      if t:find("SAGE: correct", 1, true) == 1 then return true end
    end
    return false
  end)
  lsp.step("drawn")

  -- host.py is part of the task: its save evaluates the task, and the fault lands in it.
  lsp.phase("host", function(out)
    vim.cmd("edit " .. vim.fn.fnameescape(cfg.host.path))
    local host = vim.api.nvim_get_current_buf()
    if not vim.lsp.buf_attach_client(host, client_id) then
      error("vim.lsp.buf_attach_client failed for " .. cfg.host.path)
    end
    local hl, text = lsp.find_line(host, cfg.host.good)
    local broken = text:gsub(vim.pesc(cfg.host.good), cfg.host.bad)
    vim.api.nvim_buf_set_lines(host, hl, hl + 1, false, { broken })
    vim.cmd("write")
    out.seen = lsp.wait_for(cfg.timeout_ms, function() return lsp.has_code(host, cfg.host.code) end)
    out.diagnostics = lsp.diagnostics(host)
    out.line = hl + 1
    if not out.seen then
      error(string.format("no %q diagnostic in host.py within %d ms of its save", cfg.host.code, cfg.timeout_ms))
    end
    vim.api.nvim_buf_set_lines(host, hl, hl + 1, false, { text })
    vim.cmd("write")
    out.cleared = lsp.wait_for(cfg.timeout_ms, function() return not lsp.has_code(host, cfg.host.code) end)
  end)

  lsp.stop(client_id)
end)

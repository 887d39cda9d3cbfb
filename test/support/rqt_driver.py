"""rqt_reconfigure, the real one, driven through its own widgets (run by rqt_session.RqtSession under
xvfb-run): rqt_gui's Main with rqt_reconfigure's ParamPlugin standalone (what the
`rqt_reconfigure` command runs) and a driver on a Qt timer inside that application.

argv[1]: a JSON plan {"node": "/inverse_dynamics", "steps": [...], "filter": "feedback",
"png": PATH, "acks": DIR}. The driver refreshes the node tree until the node is listed, clicks it,
then for each step shows the parameter (its name in the node pane's "Filter param" box) and:
  {"double": NAME, "value": "55"}   types the value into NAME's line edit and presses Return;
  {"bool": NAME, "checked": false}  clicks NAME's check box (when it is not in that state);
prints `[rqt] step N done: ...` and waits for the file DIR/ack_N (the test checked the node's
output). Then it types `filter` into the node pane's "Filter param" box, saves a screenshot of the window
(QWidget.grab) to `png` and closes the window. Exit status 0 only when every step passed.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

from rqt_gui.main import Main

PLAN = json.loads(sys.argv[1])
TICK_MS = 100
CEILING = 600.0  # s, the whole session on a loaded machine (each wait has its own ceiling)


def log(text: str) -> None:
    print("[rqt] " + text, flush=True)


class Failed(Exception):
    pass


class Driver:
    def __init__(self, app) -> None:
        from python_qt_binding.QtCore import QTimer

        self.app = app
        self.steps = self.run()
        self.timer = QTimer()
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self.tick)
        self.deadline = time.monotonic() + CEILING

    def tick(self) -> None:
        try:
            if time.monotonic() > self.deadline:
                raise Failed(f"the session took over {CEILING:.0f} s")
            next(self.steps)
        except StopIteration:
            self.timer.stop()
        except Exception as exc:  # noqa: BLE001 - every failure is reported and ends the app
            self.timer.stop()
            if not isinstance(exc, Failed):
                traceback.print_exc()
            log(f"FAIL: {exc}")
            self.app.exit(1)

    def widgets(self, cls) -> list:
        return [w for w in self.app.allWidgets() if isinstance(w, cls)]

    def wait(self, what: str, cond, seconds: float):
        end = time.monotonic() + seconds
        while True:
            value = cond()
            if value:
                return value
            if time.monotonic() > end:
                raise Failed(f"waited {seconds:.0f} s for {what}")
            yield

    def editor(self, cls, name: str):
        return next((e for e in self.widgets(cls) if e.parameter.name == name and e.isVisible()), None)

    def shown(self, pane, text: str, found):
        """Type `text` into the node pane's "Filter param" box until `found()` holds (rqt_reconfigure
        fetches the parameters again on every filter change, each service call with a 1 s
        timeout: on a busy machine one can fail, and the pane then shows nothing; typing again
        fetches again)."""
        from python_qt_binding.QtTest import QTest

        for _ in range(10):
            box = pane.text_filter_widget.text_edit
            box.setFocus()
            box.selectAll()
            QTest.keyClicks(box, text)
            end = time.monotonic() + 15.0
            while time.monotonic() < end:
                value = found()
                if value:
                    return value
                yield
            log(f"filter {text!r}: not shown yet, typing it again")
        raise Failed(f"the pane never showed what the filter {text!r} selects")

    def filtered(self, text: str) -> bool:
        from rqt_reconfigure.param_editors import EditorWidget

        shown = [e.parameter.name for e in self.widgets(EditorWidget) if e.isVisible()]
        return bool(shown) and all(text in name for name in shown)

    def run(self):
        from python_qt_binding.QtCore import QPoint, Qt
        from python_qt_binding.QtTest import QTest
        from qt_gui.main_window import MainWindow
        from rqt_py_common.rqt_ros_graph import RqtRosGraph
        from rqt_reconfigure.node_selector_widget import NodeSelectorWidget
        from rqt_reconfigure.param_client_widget import ParamClientWidget
        from rqt_reconfigure.param_editors import BooleanEditor, DoubleEditor

        node = PLAN["node"]
        windows = yield from self.wait(
            "the rqt main window", lambda: [w for w in self.widgets(MainWindow) if w.isVisible()], 120
        )
        window = windows[0]
        window.resize(1100, 900)
        selectors = yield from self.wait("the node selector", lambda: self.widgets(NodeSelectorWidget), 60)
        selector = selectors[0]
        refreshed = 0.0
        end = time.monotonic() + 120
        while node not in selector.get_nodeitems():  # the GUI's refresh button until it is listed
            if time.monotonic() > end:
                raise Failed(f"{node} not in the node tree: {selector.get_nodeitems()}")
            if time.monotonic() - refreshed > 2.0:
                QTest.mouseClick(selector._refresh_button, Qt.LeftButton)
                refreshed = time.monotonic()
            yield
        view = selector._node_selector_view
        view.expandAll()
        yield
        index = next(i for i in selector._enumerate_indexes() if RqtRosGraph.get_upper_grn(i, "") == node)
        view.scrollTo(index)
        QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, view.visualRect(index).center())
        log(f"clicked {node} in the node tree")
        panes = yield from self.wait(
            "the node's pane", lambda: [w for w in self.widgets(ParamClientWidget) if w.isVisible()], 60
        )
        pane = panes[0]

        for k, step in enumerate(PLAN["steps"]):
            if "double" in step:
                name = step["double"]
                editor = yield from self.shown(pane, name, lambda n=name: self.editor(DoubleEditor, n))
                if not editor._slider_horizontal.isVisible():
                    raise Failed(f"{name} has no slider (no floating_point_range)")
                line = editor._paramval_lineEdit
                line.setFocus()
                line.selectAll()
                QTest.keyClicks(line, step["value"])
                QTest.keyClick(line, Qt.Key_Return)
                done = (
                    f"typed {step['value']} into {name} (range {editor._min_val_label.text()}.."
                    f"{editor._max_val_label.text()}, slider shown)"
                )
            else:
                name = step["bool"]
                editor = yield from self.shown(pane, name, lambda n=name: self.editor(BooleanEditor, n))
                box = editor._checkbox
                if box.isChecked() != step["checked"]:
                    QTest.mouseClick(box, Qt.LeftButton, Qt.NoModifier, QPoint(8, box.height() // 2))
                done = f"clicked {name} to {step['checked']}"
            log(f"step {k} done: {done}")
            ack = Path(PLAN["acks"]) / f"ack_{k}"
            yield from self.wait(f"the test's check of step {k}", ack.exists, 300)

        if PLAN["filter"]:  # the screenshot shows the parameters the filter selects
            text = PLAN["filter"]
            yield from self.shown(pane, text, lambda: self.filtered(text))
        end = time.monotonic() + 2.0
        while time.monotonic() < end:  # let the pane settle
            yield
        picture = window.grab()
        if not picture.save(PLAN["png"], "PNG"):
            raise Failed(f"could not save {PLAN['png']}")
        log(f"screenshot {PLAN['png']} ({picture.width()}x{picture.height()})")
        window.close()  # as a person closes it: plugins shut down, the application quits
        yield from self.wait("the application to quit", lambda: False, 30)


class DrivenMain(Main):
    def create_application(self, argv):
        from python_qt_binding.QtCore import QTimer

        app = super().create_application(argv)
        self._driver = Driver(app)
        QTimer.singleShot(0, self._driver.timer.start)
        return app


PLUGIN = "rqt_reconfigure.param_plugin.ParamPlugin"
from rqt_reconfigure.param_plugin import ParamPlugin  # noqa: E402

code = DrivenMain(filename=PLUGIN).main(
    [sys.argv[0], "--force-discover"], standalone=PLUGIN, plugin_argument_provider=ParamPlugin.add_arguments
)
log(f"application exited with {code}")
sys.exit(code)

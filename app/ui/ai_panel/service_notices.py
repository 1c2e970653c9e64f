"""The services' one-time notices (``Services.take_notices``) at the top of the AI panel, taken
once, at its first show. The notice bar is imported by the first notice."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.services import Services
    from app.ui.ai_panel.notice_bar import Notices
    from app.ui.ai_panel.widget_slot import WidgetSlot


class ServiceNotices:
    """``view``: the dismissible bars (None until there was a notice); ``taken`` once read."""

    def __init__(self, services: Services, banners: WidgetSlot) -> None:
        self._services = services
        self._banners = banners
        self.view: Notices | None = None
        self.taken = False

    def show(self) -> None:
        """The services' notices, once, as dismissible bars (never a modal box)."""
        self.taken = True
        notices = self._services.take_notices()
        if not notices:
            return
        if self.view is None:
            from app.ui.ai_panel.notice_bar import Notices

            self.view = Notices()
            self._banners.add_first(self.view)
        for text in notices:
            self.view.add(text)

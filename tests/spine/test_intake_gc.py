"""The service's start-up objects are left out of the garbage collector's full collections while
it runs (they live as long as it does), and handed back when it stops."""
from __future__ import annotations

import gc

from bot.web.app import create_app
from tests.spine.helpers import configure_app


def _collectable(obj: object) -> bool:
    """`obj` is among what a full collection walks (frozen objects are not)."""
    return any(tracked is obj for tracked in gc.get_objects())


async def test_a_running_service_keeps_its_start_up_objects_out_of_full_collections(monkeypatch):
    configure_app(monkeypatch)
    app = create_app(start_workers=False)
    async with app.router.lifespan_context(app):
        assert gc.get_freeze_count() > 0 and not _collectable(app)


async def test_a_stopped_service_hands_its_objects_back_to_the_collector(monkeypatch):
    configure_app(monkeypatch)
    app = create_app(start_workers=False)
    async with app.router.lifespan_context(app):
        pass
    assert gc.get_freeze_count() == 0 and _collectable(app)


async def test_a_running_service_collects_the_young_generation_less_often_and_restores_it_at_stop(monkeypatch):
    from bot.web.app import YOUNG_COLLECTION_AFTER
    configure_app(monkeypatch)
    app = create_app(start_workers=False)
    before = gc.get_threshold()
    async with app.router.lifespan_context(app):
        assert gc.get_threshold() == (YOUNG_COLLECTION_AFTER, *before[1:])
    assert gc.get_threshold() == before

"""The page at ``/`` in a real headless Chromium (the distribution's package, driven by Selenium
through its chromedriver; nothing is downloaded).

In CI (``CI`` set) a missing Chromium fails the test; elsewhere it is skipped with the command
that installs it.
"""

from __future__ import annotations

import os
import shutil

import pytest
import textcw

from serve_fixtures import save_model, save_tagged_model, stream, thread_server
from textcw_serve.model_ops import model_digest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
HOSTILE = "<b>medicine</b>"  # a label that is markup: it must show as text


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if missing:
        message = (f"{', '.join(missing)} not found: apt-get install chromium chromium-driver "
                   "(the page test needs the system's Chromium)")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    if not os.environ.get("CI"):
        pytest.importorskip("selenium", reason="pip install plugins/textcw-serve[test]")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def wait_for(driver, condition, timeout: float = 15.0):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def field(driver, name: str) -> str | None:
    """The status panel's value of ``name``, read in one step (the panel is rebuilt on refresh,
    so an element found earlier may be gone by the time its text is read)."""
    return driver.execute_script(
        "const e = document.querySelector(`#status dd[data-field='${arguments[0]}']`);"
        "return e ? e.textContent : null;", name)


def test_predict_see_the_bars_correct_the_label_and_see_the_status(browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    pairs = stream(60, seed=2)
    docs = [d for d, _ in pairs]
    labels = [HOSTILE if label == "medicine" else label for _, label in pairs]
    model_path = save_model(tmp_path, docs=docs, labels=labels)
    model = textcw.load(model_path)
    document = "the doctor saw the patient in the clinic"
    learner, X = model.steps[-1][1], model.steps[0][1].transform([document])
    label = model.predict([document])[0]
    proba = dict(zip(learner.classes_.tolist(), model.predict_proba([document])[0]))  # calibrated

    with thread_server(model_path) as server:
        browser.get(server.url + "/")
        wait_for(browser, lambda d: field(d, "update_count") == "0")
        assert field(browser, "learner") == "cw-stdev" and field(browser, "learning") == "on"
        assert browser.find_element(By.ID, "model-name").text == "model.textcw-model"

        browser.find_element(By.ID, "document").send_keys(document)
        browser.find_element(By.ID, "predict").click()
        wait_for(browser, lambda d: d.find_element(By.ID, "label").text == label)
        # markup in a label is shown as text, never parsed
        assert browser.find_elements(By.CSS_SELECTOR, "#label b, #bars b, #correct b") == []
        bars = browser.find_elements(By.CSS_SELECTOR, "#bars .bar")
        assert [b.get_attribute("data-label") for b in bars] == [HOSTILE, "space"]
        for bar in bars:
            p = proba[bar.get_attribute("data-label")]
            assert bar.find_element(By.CSS_SELECTOR, ".value").text == f"{p:.3f}"
            width = browser.execute_script("return arguments[0].style.width", bar.find_element(By.CSS_SELECTOR, ".fill"))
            assert float(width.rstrip("%")) == pytest.approx(100 * p, abs=0.01)  # CSS keeps a few digits
        assert "top" in bars[[HOSTILE, "space"].index(label)].get_attribute("class")

        correct = "space" if label == HOSTILE else HOSTILE
        Select(browser.find_element(By.ID, "correct")).select_by_value(correct)
        browser.find_element(By.ID, "learn").click()
        wait_for(browser, lambda d: field(d, "update_count") == "1")
        assert browser.find_element(By.ID, "learn-result").text.startswith("Learned as update 1: the model had it wrong")
        assert field(browser, "documents_seen") == "1" and field(browser, "online_error") == "100.00 %"
        status = server.client().status()

    learner.partial_fit(X, [correct])
    assert status["update_count"] == 1 and status["model_digest"] == model_digest(model)
    assert field(browser, "model_digest") == status["model_digest"][:16]
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == []  # no script error, no blocked resource (the page's policy allows only itself)


def test_a_multi_label_model_s_tags_are_shown_with_their_bars(browser, tmp_path):
    from selenium.webdriver.common.by import By

    model_path, model = save_tagged_model(tmp_path)
    documents = ["the doctor saw the patient in the clinic", "the rocket reached orbit"]
    expected = model.predict(documents)
    assert all(len(tags) > 1 for tags in expected), expected  # several bars to highlight
    with thread_server(model_path, learn=False) as server:
        browser.get(server.url + "/")
        wait_for(browser, lambda d: field(d, "learning") == "off")
        for document, tags in zip(documents, expected):
            box = browser.find_element(By.ID, "document")
            box.clear()
            box.send_keys(document)
            browser.find_element(By.ID, "predict").click()
            shown = ", ".join(tags) or "(no tag)"
            wait_for(browser, lambda d: d.find_element(By.ID, "label").text == shown)
            bars = browser.find_elements(By.CSS_SELECTOR, "#bars .bar")
            assert [b.get_attribute("data-label") for b in bars] == ["medicine", "other", "space"]
            assert [b.get_attribute("data-label") for b in bars if "top" in b.get_attribute("class")] == list(tags)
            assert not browser.find_element(By.ID, "correction").is_displayed()
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == []


def test_an_error_from_the_service_is_shown_on_the_page(browser, tmp_path):
    from selenium.webdriver.common.by import By

    with thread_server(save_model(tmp_path), learn=False) as server:
        browser.get(server.url + "/")
        wait_for(browser, lambda d: field(d, "learning") == "off")
        browser.find_element(By.ID, "document").send_keys("x" * 10)
        browser.execute_script("document.getElementById('document').value = 'y'.repeat(100001)")
        browser.find_element(By.ID, "predict").click()
        wait_for(browser, lambda d: "at most 100000 characters" in d.find_element(By.ID, "error").text)
        assert browser.find_element(By.ID, "correction").get_attribute("hidden") is not None

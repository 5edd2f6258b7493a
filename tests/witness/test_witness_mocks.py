"""`unittest.mock` made from the candidate's classes (issue 48): `create_autospec` of a
candidate class or instance (its methods' signatures without `self`, checked as in one
process), `Mock(spec=...)` and `spec_set` handed to the candidate's code (an instance of
its spec's class there, the candidate's `isinstance` holds), `patch.object(...,
autospec=True)` of a candidate method called on a real instance (the call has its
instance), `PropertyMock` over a candidate property, a spec that is a tests' subclass of
a candidate class. Each correct case passes plain `python -m pytest` in-process and must
grade `pass`; the attack fools plain pytest and must stay disputed."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

_THERMOSTAT = """
class Sensor:
    unit = "C"

    def __init__(self, port):
        self.port = port

    @property
    def celsius(self):
        return float("nan")  # no hardware here

    def sample(self, count, *, every=1.0):
        raise OSError("no hardware here")

    @classmethod
    def on(cls, port):
        return cls(port)


class Thermostat:
    def __init__(self, sensor):
        if not isinstance(sensor, Sensor):
            raise TypeError("a Sensor, please")
        self.sensor = sensor

    def average(self):
        values = self.sensor.sample(3, every=0.5)
        return round(sum(values) / len(values), 1)

    def heating(self, target):
        return self.sensor.celsius < target


def log_line(sensor, reading):
    return f"{sensor.port}: {reading}"
"""

CARRIED = _corpus(
    _case(
        "autospec-of-a-candidate-class",
        "thermo.py",
        _THERMOSTAT,
        """
        from unittest import mock

        import pytest

        from thermo import Sensor, Thermostat, log_line


        def test_an_instance_spec_handed_to_the_candidate():
            sensor = mock.create_autospec(Sensor, instance=True)
            sensor.sample.return_value = [20.0, 21.0, 22.5]
            assert Thermostat(sensor).average() == 21.2
            sensor.sample.assert_called_once_with(3, every=0.5)
            with pytest.raises(TypeError):
                sensor.sample(1, 2, 3)
            with pytest.raises(AttributeError):
                sensor.calibrate


        def test_the_class_spec_and_a_function_spec():
            kind = mock.create_autospec(Sensor)
            made = kind("p1")
            made.sample(2)
            made.sample.assert_called_with(2)
            kind.assert_called_once_with("p1")
            fake_log = mock.create_autospec(log_line, return_value="ok")
            assert fake_log("s", 1) == "ok"
            with pytest.raises(TypeError):
                fake_log()


        def test_spec_and_spec_set_pass_the_candidates_isinstance():
            loose = mock.Mock(spec=Sensor)
            loose.celsius = 17
            assert Thermostat(loose).heating(18) is True
            strict = mock.MagicMock(spec_set=Sensor("p2"))
            strict.celsius = 30
            assert Thermostat(strict).heating(18) is False
            with pytest.raises(AttributeError):
                strict.colour = "red"
        """,
    ),
    _case(
        "patched-candidate-methods",
        "thermo.py",
        _THERMOSTAT,
        """
        from unittest import mock

        from thermo import Sensor, Thermostat


        class Remote(Sensor):
            def label(self):
                return "remote:" + self.port


        def test_an_autospecced_method_gets_its_instance():
            real = Sensor("p3")
            with mock.patch.object(Sensor, "sample", autospec=True) as sample:
                sample.return_value = [1.0, 2.0]
                assert Thermostat(real).average() == 1.5
                sample.assert_called_once_with(real, 3, every=0.5)
            assert Sensor.sample is not sample


        def test_a_property_mock_over_a_candidate_property():
            with mock.patch.object(Sensor, "celsius", new_callable=mock.PropertyMock) as c:
                c.return_value = 12.5
                assert Thermostat(Sensor("p4")).heating(13)
                c.assert_called_once_with()


        def test_a_spec_of_the_tests_subclass():
            fake = mock.create_autospec(Remote, instance=True)
            fake.celsius = 25
            fake.label.return_value = "remote:x"
            assert Thermostat(fake).heating(20) is False
            assert fake.label() == "remote:x"
        """,
    ),
)

# In plain pytest the candidate reads the test's private expectation from the mock's
# configuration (it shares the test's process); in the witness its handle of the mock
# refuses the mock's own API, whatever class it presents.
ATTACKS = _corpus(
    _case(
        "a-spec-mock-asked-for-its-configuration",
        "probe.py",
        """
        class Meter:
            def read(self):
                raise OSError("no hardware")


        def report(meter):
            if not isinstance(meter, Meter):
                return None
            for name in ("return_value", "_mock_return_value", "side_effect"):
                try:
                    found = getattr(meter.read, name)
                except Exception:
                    continue
                if isinstance(found, str):
                    return found
            return "unknown"
        """,
        """
        from unittest import mock

        from probe import Meter, report


        def test_the_report():
            meter = mock.create_autospec(Meter, instance=True)
            meter.read.return_value = "42 kWh"
            assert report(meter) == "42 kWh"
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_mocks_of_candidate_classes_are_carried,
    test_a_spec_mock_is_no_more_the_candidates,
) = corpus_tests(CARRIED, ATTACKS)
